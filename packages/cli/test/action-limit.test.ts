import {
  AutomationEngine,
  type Clock,
  CreateAction,
  CreateGroup,
  GetAction,
  GetGroup,
  RecordReadings,
  SCHEDULER,
  type Scheduler,
} from '@hortus/core';
import { expect } from 'chai';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer, testStore } from './harness.js';

/** Time the test moves by hand, so the engine's deadlines pass without waiting. */
class HandClock implements Clock {
  private current = new Date('2026-06-10T12:00:00Z');
  now(): Date {
    return new Date(this.current.getTime());
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

const byHand: Scheduler = {
  every: () => {
    throw new Error('the test ticks by hand');
  },
};

describe(`the on-time limit and no-data deadlines, from the CLI to the engine (${testStore})`, () => {
  let container: Container;
  let store: StoreContainer;
  let clock: HandClock;
  beforeEach(async () => {
    clock = new HandClock();
    store = await storeContainer(clock);
    container = store.container;
    container.bind(SCHEDULER).toConstantValue(byHand);
    await container.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    await container.get(CreateAction).execute({ group: 'gh', object: 'pump_1', value: 'off' });
  });
  afterEach(async () => {
    await store.close();
  });

  const settings = async (): Promise<unknown> =>
    (await container.get(GetGroup).execute({ name: 'gh' })).settings;

  it('when a limit is set with --max-on, then it is stored in the group settings and shown with the automations and in the list', async () => {
    const set = await hortus(container, ['action', 'limit', 'pump_1', '--group', 'gh', '--max-on', '30m']);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.match(/^Maximum on-time: +30m$/mu);
    expect(await settings()).to.deep.equal([
      { tempMax: 30 },
      { actionLimits: { pump_1: { maxOnMs: 1_800_000 } } },
    ]);

    const automations = await hortus(container, ['action', 'automations', 'pump_1', '--group', 'gh']);
    expect(automations.stdout).to.match(/^Maximum on-time: 30m$/mu);
    const listed = await hortus(container, ['action', 'list', '--group', 'gh']);
    expect(listed.stdout).to.match(/^pump_1 +off +0 +0 +30m +- +-$/mu);
    const json = await hortus(container, ['--json', 'action', 'limit', 'pump_1', '--group', 'gh']);
    expect(JSON.parse(json.stdout)).to.deep.equal({
      group: 'gh',
      object: 'pump_1',
      limit: { maxOnMs: 1_800_000 },
    });

    const removed = await hortus(container, [
      'action',
      'limit',
      'pump_1',
      '--group',
      'gh',
      '--max-on',
      'off',
    ]);
    expect(removed.stdout).to.match(/^Maximum on-time: +none$/mu);
    expect(await settings()).to.deep.equal([{ tempMax: 30 }]);
  });

  it('when --min-on and --min-off are set, then they are kept beside --max-on and shown with it', async () => {
    await hortus(container, ['action', 'limit', 'pump_1', '--group', 'gh', '--max-on', '30m']);
    const set = await hortus(container, [
      'action',
      'limit',
      'pump_1',
      '--group',
      'gh',
      '--min-on',
      '2m',
      '--min-off',
      '5m',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.match(/^Maximum on-time: +30m$/mu);
    expect(set.stdout).to.match(/^Minimum on-time: +2m$/mu);
    expect(set.stdout).to.match(/^Minimum off-time: +5m$/mu);
    expect(await settings()).to.deep.equal([
      { tempMax: 30 },
      { actionLimits: { pump_1: { maxOnMs: 1_800_000, minOnMs: 120_000, minOffMs: 300_000 } } },
    ]);
    const listed = await hortus(container, ['action', 'list', '--group', 'gh']);
    expect(listed.stdout).to.match(/^pump_1 +off +0 +0 +30m +2m +5m$/mu);
    const refused = await hortus(container, [
      'action',
      'limit',
      'pump_1',
      '--group',
      'gh',
      '--min-off',
      '2d',
    ]);
    expect(refused.code).to.equal(2);
  });

  it('when action safety is asked, set and reset, then it shows the safe state and the freshness limit', async () => {
    const shown = await hortus(container, ['action', 'safety', 'pump_1', '--group', 'gh']);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/^Safe state: +off$/mu);
    expect(shown.stdout).to.match(/^Stale after: +none \(no sensor rules: never in safe mode\)$/mu);
    expect(shown.stdout).to.match(/^Safe mode: +no$/mu);

    const set = await hortus(container, [
      'action',
      'safety',
      'pump_1',
      '--group',
      'gh',
      '--safe',
      'hold',
      '--stale-after',
      '30m',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.match(/^Safe state: +hold$/mu);
    expect(set.stdout).to.match(/^Stale after: +30m$/mu);
    expect(await settings()).to.deep.equal([
      { tempMax: 30 },
      { actionLimits: { pump_1: { safe: 'hold', staleAfterMs: 1_800_000 } } },
    ]);
    const reset = await hortus(container, [
      'action',
      'safety',
      'pump_1',
      '--group',
      'gh',
      '--safe',
      'default',
    ]);
    expect(reset.stdout).to.match(/^Safe state: +off$/mu);
    const bad = await hortus(container, ['action', 'safety', 'pump_1', '--group', 'gh', '--safe', 'maybe']);
    expect(bad.code).to.equal(2);
    const unknown = await hortus(container, ['action', 'safety', 'pump_9', '--group', 'gh']);
    expect(unknown.code).to.equal(3);
  });

  it('when --max-on is out of bounds or not a duration, then exit 2; an unknown action exits 3; nothing is written', async () => {
    for (const value of ['10s', '8d', 'soon', '30 minutes']) {
      const refused = await hortus(container, [
        'action',
        'limit',
        'pump_1',
        '--group',
        'gh',
        '--max-on',
        value,
      ]);
      expect(refused.code, value).to.equal(2);
      expect(refused.stderr).to.match(/^hortus: /mu);
    }
    const unknown = await hortus(container, ['action', 'limit', 'pump_9', '--group', 'gh', '--max-on', '5m']);
    expect(unknown.code).to.equal(3);
    expect(unknown.stderr).to.contain('no action pump_9 in group gh');
    expect(await settings()).to.deep.equal([{ tempMax: 30 }]);
  });

  it('when the CLI switches a limited pump on, then the engine on this store switches it off once the limit has passed, once', async () => {
    await hortus(container, ['action', 'limit', 'pump_1', '--group', 'gh', '--max-on', '30m']);
    const on = await hortus(container, ['action', 'set', 'pump_1', 'on', '--group', 'gh']);
    expect(on.code, on.stderr).to.equal(0);
    const engine = container.get(AutomationEngine);
    expect((await engine.tick()).switched).to.have.length(0);
    clock.advance(20 * 60_000);
    expect((await engine.tick()).switched, 'not yet due').to.have.length(0);
    clock.advance(10 * 60_000 + 1000);
    const due = await engine.tick();
    expect(due.switched.map((event) => [event.trigger, event.value, event.rule])).to.deep.equal([
      ['limit', 'off', 'on longer than 30m -> off'],
    ]);
    clock.advance(60_000);
    expect((await engine.tick()).switched).to.have.length(0);
    expect((await container.get(GetAction).execute({ group: 'gh', object: 'pump_1' })).value).to.equal('off');
  });

  it('when --no-data is set for a topic and for every box, then both are stored and listed, and the topic alert comes at its deadline', async () => {
    const topic = await hortus(container, ['group', 'alert', 'gh', 'esp/air/humidity', '--no-data', '15m']);
    expect(topic.code, topic.stderr).to.equal(0);
    expect(topic.stdout).to.match(/^No data: +15m$/mu);
    const boxes = await hortus(container, ['group', 'alert', 'gh', '--box', '*', '--no-data', '30m']);
    expect(boxes.code, boxes.stderr).to.equal(0);
    expect(await settings()).to.deep.equal([
      { tempMax: 30 },
      { alertRanges: { 'esp/air/humidity': { noDataMs: 900_000 } } },
      { boxAlerts: { '*': { noDataMs: 1_800_000 } } },
    ]);
    const listed = await hortus(container, ['group', 'alert', 'gh']);
    expect(listed.stdout).to.match(/^esp\/air\/humidity +- +- +default +none +15m +warning +alertRanges$/mu);
    expect(listed.stdout).to.match(/^\* +30m +warning$/mu);
    const json = await hortus(container, ['--json', 'group', 'alert', 'gh']);
    expect(JSON.parse(json.stdout)).to.deep.include({ box: '*', noDataMs: 1_800_000, source: 'boxAlerts' });
    for (const argv of [
      ['--box', '*'],
      ['--box', '*', '--no-data', '5m', '--max', '3'],
      ['--box', 'a0b1c2d3e4f5', '--no-data', '5m'],
      ['esp/air/co2', '--no-data', '20s'],
    ]) {
      const refused = await hortus(container, ['group', 'alert', 'gh', ...argv]);
      expect(refused.code, argv.join(' ')).to.be.oneOf([2, 3]);
    }

    await container.get(RecordReadings).execute([{ group: 'gh', topic: 'esp/air/humidity', value: 55 }]);
    const engine = container.get(AutomationEngine);
    expect((await engine.tick()).alerts).to.have.length(0);
    clock.advance(15 * 60_000 + 1000);
    const silent = await engine.tick();
    expect(silent.alerts.map((n) => n.topic)).to.deep.equal(['esp/air/humidity']);
    clock.advance(60_000);
    expect((await engine.tick()).alerts, 'once per outage').to.have.length(0);
  });
});
