import { CreateAction, CreateGroup, RecordReadings } from '@hortus/core';
import { expect } from 'chai';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

describe(`hortus action lockout and lockouts (${testStore})`, () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
    await container.get(CreateGroup).execute({ name: 'gh', settings: [] });
    for (const object of ['heater_1', 'pump_1', 'ventilator_1'])
      await container.get(CreateAction).execute({ group: 'gh', object, value: 'off' });
  });
  afterEach(async () => {
    await store.close();
  });

  const run = (...args: string[]) => hortus(container, ['action', ...args]);

  it('when lockouts are added, listed and removed, then each step shows them with whether they block now', async () => {
    const frost = await run(
      'lockout',
      'pump_1',
      '--group',
      'gh',
      '--sensor',
      'temperature',
      '--below',
      '-1.5',
    );
    expect(frost.code, frost.stderr).to.equal(0);
    expect(frost.stdout).to.match(
      /^1 +esp\/air\/temperature below -1\.5 +blocks: no reading of esp\/air\/temperature$/mu,
    );

    await container
      .get(RecordReadings)
      .execute([{ group: 'gh', topic: 'esp/air/temperature', value: 4, time: new Date().toISOString() }]);
    const wet = await run(
      'lockout',
      'pump_1',
      '--group',
      'gh',
      '--sensor',
      'esp/ground/moisture/1',
      '--above',
      '70',
    );
    expect(wet.code, wet.stderr).to.equal(0);
    expect(wet.stdout).to.match(/^1 +esp\/air\/temperature below -1\.5 +free$/mu);
    expect(wet.stdout).to.match(/^2 +esp\/ground\/moisture\/1 above 70 +blocks: no reading/mu);

    const interlock = await run(
      'lockout',
      'heater_1',
      '--group',
      'gh',
      '--while',
      'ventilator_1',
      '--is',
      'on',
    );
    expect(interlock.code, interlock.stderr).to.equal(0);
    expect(interlock.stdout).to.match(/^1 +ventilator_1 is on +free$/mu);

    const listed = await run('lockouts', '--group', 'gh');
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout.split('\n')[0]).to.match(/^OBJECT +VALUE +ID +LOCKOUT +NOW$/u);
    expect(listed.stdout.trim().split('\n')).to.have.lengthOf(4);
    const json = await run('lockouts', '--group', 'gh', '--json');
    expect((JSON.parse(json.stdout) as { object: string }[]).map(({ object }) => object)).to.deep.equal([
      'heater_1',
      'pump_1',
    ]);

    const removed = await run('lockout', 'pump_1', '--group', 'gh', '--remove', '1');
    expect(removed.code, removed.stderr).to.equal(0);
    expect(removed.stdout).not.to.match(/temperature/u);
    const all = await run('lockout', 'pump_1', '--group', 'gh', '--remove', 'all');
    expect(all.stdout).to.match(/^No lockouts\.$/mu);
  });

  it('when a lockout is wrong, then exit 2 naming the problem; an unknown action or lockout exits 3', async () => {
    const cases: [string[], number][] = [
      [['--sensor', 'sunshine', '--below', '2'], 2],
      [['--sensor', 'temperature'], 2],
      [['--sensor', 'temperature', '--below', 'cold'], 2],
      [['--while', 'pump_1', '--is', 'on'], 2],
      [['--while', 'ventilator_1', '--is', 'maybe'], 2],
      [['--sensor', 'temperature', '--below', '2', '--remove', '1'], 2],
      [['--remove', '7'], 3],
    ];
    for (const [args, code] of cases) {
      const result = await run('lockout', 'pump_1', '--group', 'gh', ...args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(code);
    }
    expect((await run('lockout', 'pump_9', '--group', 'gh')).code).to.equal(3);
    const help = await run('lockout', '--help');
    expect(help.stdout).to.include(
      'hortus action lockout heater_1 --group greenhouse-1 --while ventilator_1 --is on',
    );
  });
});
