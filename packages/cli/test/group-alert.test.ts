import { CreateGroup, GetGroup } from '@hortus/core';
import { expect } from 'chai';
import { type Container } from 'inversify';
import { parseDelay } from '../src/commands/shared.js';
import { hortus, type StoreContainer, storeContainer } from './harness.js';

describe('hortus group alert: a range for any topic', () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
    await container.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMin: 15 }, { tempMax: 30 }] });
  });
  afterEach(async () => {
    await store.close();
  });

  const settings = async (): Promise<unknown> =>
    (await container.get(GetGroup).execute({ name: 'gh' })).settings;

  it('when a range is set with --min --max --hysteresis --delay, then it is stored beside tempMin/tempMax and shown', async () => {
    const set = await hortus(container, [
      'group',
      'alert',
      'gh',
      'esp/air/humidity',
      '--min',
      '40',
      '--max',
      '85',
      '--hysteresis',
      '3',
      '--delay',
      '5m',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.match(/^Delay: +5m$/mu);
    const frost = await hortus(container, [
      'group',
      'alert',
      'gh',
      'esp/ground/temperature',
      '--min',
      '-2.5',
    ]);
    expect(frost.code, frost.stderr).to.equal(0);
    expect(await settings()).to.deep.equal([
      { tempMin: 15 },
      { tempMax: 30 },
      {
        alertRanges: {
          'esp/air/humidity': { min: 40, max: 85, hysteresis: 3, delayMs: 300_000 },
          'esp/ground/temperature': { min: -2.5 },
        },
      },
    ]);
    const listed = await hortus(container, ['group', 'alert', 'gh']);
    expect(listed.code, listed.stderr).to.equal(0);
    // Severity (issue 36) is the column before the source; a range that names none is a warning.
    expect(listed.stdout).to.match(/^esp\/air\/humidity +40 +85 +3 +5m +- +warning +alertRanges$/mu);
    expect(listed.stdout).to.match(
      /^esp\/ground\/temperature +-2\.5 +- +default +none +- +warning +alertRanges$/mu,
    );
    // The original's keys are listed too, for the topic they bound.
    expect(listed.stdout).to.match(
      /^esp\/air\/temperature +15 +30 +default +none +- +warning +tempMin\/tempMax$/mu,
    );
  });

  it('when a range is set on a derived series, then it is kept like any topic (issue 35)', async () => {
    const set = await hortus(container, [
      ...['group', 'alert', 'gh', 'esp/derived/vpd'],
      ...['--min', '0.8', '--max', '1.2', '--delay', '10m'],
    ]);
    expect(set.code, set.stderr).to.equal(0);
    const listed = await hortus(container, ['group', 'alert', 'gh', 'esp/derived/vpd']);
    expect(listed.stdout).to.match(
      /^esp\/derived\/vpd +0\.8 +1\.2 +default +10m +- +(warning +)?alertRanges$/mu,
    );
  });

  it('when one option is changed or turned off, then the others stay; --remove drops the range alone', async () => {
    await hortus(container, ['group', 'alert', 'gh', 'co2', '--max', '1500', '--delay', '90s']);
    const changed = await hortus(container, [
      '--json',
      'group',
      'alert',
      'gh',
      'co2',
      '--min',
      '300',
      '--delay',
      'off',
    ]);
    expect(changed.code, changed.stderr).to.equal(0);
    expect(JSON.parse(changed.stdout)).to.deep.equal({
      group: 'gh',
      topic: 'co2',
      range: { min: 300, max: 1500 },
    });
    const removed = await hortus(container, ['group', 'alert', 'gh', 'co2', '--remove']);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(await settings()).to.deep.equal([{ tempMin: 15 }, { tempMax: 30 }]);
  });

  it('when the input is wrong, then the command exits 2 with the reason and nothing changes; an unknown group exits 3', async () => {
    for (const argv of [
      ['co2', '--min', '900', '--max', '800'],
      ['co2', '--max', 'high'],
      ['co2', '--max', '50', '--delay', '5 minutes'],
      ['co2', '--max', '50', '--remove'],
      ['--max', '50'],
    ]) {
      const refused = await hortus(container, ['group', 'alert', 'gh', ...argv]);
      expect(refused.code, argv.join(' ')).to.equal(2);
      expect(refused.stderr).to.match(/^hortus: /mu);
    }
    const unknown = await hortus(container, ['group', 'alert', 'nope', 'co2', '--max', '1']);
    expect(unknown.code).to.equal(3);
    expect(await settings()).to.deep.equal([{ tempMin: 15 }, { tempMax: 30 }]);
  });

  it('when a delay is written with a unit, then it is read as milliseconds', () => {
    expect([
      parseDelay('90s'),
      parseDelay('5m'),
      parseDelay('1h'),
      parseDelay('250ms'),
      parseDelay('30'),
    ]).to.deep.equal([90_000, 300_000, 3_600_000, 250, 30_000]);
    expect(parseDelay('off')).to.equal('off');
  });
});
