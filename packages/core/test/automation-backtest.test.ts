import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import {
  type AutomationSet,
  InvalidInputError,
  markEngineRun,
  type NewReading,
  NotFoundError,
  sensorTopics,
} from '@hortus/core';
import { FakeClock, instance, type Instance, type SharedStore, sharedStore } from './automation-support.js';
import { random } from './fault-harness.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const FROM = Date.parse('2026-02-10T04:00:00Z');
const HOURS = 6;
const TO = FROM + HOURS * 3_600_000;

const heater: AutomationSet[] = [
  {
    timeAutomations: [],
    sensorAutomations: [
      { action: 'on', sensor: 'temperature', condition: 'less than', value: '18' },
      { action: 'off', sensor: 'temperature', condition: 'above', value: '21' },
    ],
  },
];
const pump: AutomationSet[] = [
  {
    timeAutomations: [{ action: 'on', time: '06:00', frequency: 'every day' }],
    sensorAutomations: [
      { action: 'on', sensor: 'moisture', condition: 'less than', value: '40' },
      { action: 'off', sensor: 'moisture', condition: 'above', value: '60' },
    ],
  },
];
const fan: AutomationSet[] = [
  {
    timeAutomations: [{ action: 'off', time: '10:30', frequency: 'every day' }],
    sensorAutomations: [
      { action: 'on', sensor: 'temperature', condition: 'above', value: '25' },
      { action: 'off', sensor: 'temperature', condition: 'less than', value: '23' },
    ],
  },
];

/** Six hours of three topics every 20 s: temperature and moisture swing through the thresholds; humidity is read by a lockout only. */
function readings(): NewReading[] {
  const next = random(34);
  const found: NewReading[] = [];
  for (let at = FROM - 600_000; at <= TO; at += 20_000) {
    const hours = (at - FROM) / 3_600_000;
    // The temperature sensor is silent from 3 h 18 min to 3 h 54 min into the run, while the heater is on: safe mode.
    if (!(hours >= 3.3 && hours < 3.9))
      found.push({
        group: 'gh',
        topic: sensorTopics.temperature,
        value: Math.round((21 + 6 * Math.sin((2 * Math.PI * hours) / 2) + (next() - 0.5) * 1.5) * 100) / 100,
        time: new Date(at),
      });
    found.push({
      group: 'gh',
      topic: sensorTopics.moisture1,
      value: Math.round((50 + 14 * Math.sin((2 * Math.PI * hours) / 1.5) + (next() - 0.5) * 2) * 100) / 100,
      time: new Date(at + 7_000),
    });
    found.push({ group: 'gh', topic: sensorTopics.humidity, value: 60, time: new Date(at + 13_000) });
  }
  return found;
}

async function greenhouse(store: SharedStore, clock: FakeClock): Promise<Instance> {
  const server = instance(store, clock, 'UTC');
  await server.createGroup.execute({ name: 'gh', settings: [] });
  await server.createAction.execute({ group: 'gh', object: 'heater_1', value: 'off', automations: heater });
  await server.createAction.execute({ group: 'gh', object: 'pump_1', value: 'off', automations: pump });
  await server.createAction.execute({ group: 'gh', object: 'ventilator_1', value: 'off', automations: fan });
  await server.setLimit.execute({ group: 'gh', object: 'heater_1', maxOnMs: 45 * 60_000, minOnMs: 120_000 });
  await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 10 * 60_000, minOffMs: 300_000 });
  // Lockouts are replayed by the live engine's code: an interlock, and one whose input only they read.
  await server.addLockout.execute({
    group: 'gh',
    object: 'pump_1',
    lockout: { while: 'ventilator_1', is: 'on' },
  });
  await server.addLockout.execute({
    group: 'gh',
    object: 'heater_1',
    lockout: { sensor: 'humidity', above: 95 },
  });
  return server;
}

const summary = (
  events: readonly { at: Date; object: string; value: string; trigger: string; rule: string }[],
) =>
  events.map(({ at, object, value, trigger, rule }) =>
    [at.toISOString(), object, value, trigger, rule].join(' '),
  );

describe('automation backtest', () => {
  it('when stored readings are replayed, then it lists the very switches the live engine made ticking over the same readings, and writes nothing', async () => {
    const all = readings();
    // The live engine: readings arrive at their time, a tick every 10 s on the fake clock.
    const liveStore = sharedStore();
    const clock = new FakeClock(new Date(FROM - 600_000));
    const live = await greenhouse(liveStore, clock);
    await markEngineRun(liveStore.engineState, new Date(FROM));
    let arrived = 0;
    for (let at = FROM; at <= TO; at += 10_000) {
      clock.set(new Date(at).toISOString());
      const due: NewReading[] = [];
      while (arrived < all.length && (all[arrived]?.time.getTime() ?? Infinity) <= at)
        due.push(all[arrived++]!);
      if (due.length > 0) await liveStore.readings.add(due);
      await live.engine.tick();
    }
    const liveEvents = (await liveStore.automationLog.listByGroup('gh', 1000)).reverse();

    // The backtest: the same readings, stored before, replayed.
    const store = sharedStore();
    const server = await greenhouse(store, new FakeClock(new Date(TO + 3_600_000)));
    await store.readings.add(all);
    const before = {
      actions: await store.actions.listByGroup('gh'),
      history: await store.actionHistory.list('gh', undefined, 1000),
      state: await store.engineState.list(),
      notifications: await store.notifications.listCopies('gh'),
      revision: await store.actions.revision('gh'),
    };

    const result = await server.backtest.execute({
      group: 'gh',
      from: new Date(FROM).toISOString(),
      to: new Date(TO).toISOString(),
    });

    expect(summary(result.switches)).to.deep.equal(summary(liveEvents));
    expect(new Set(result.switches.map((s) => s.trigger))).to.deep.equal(
      new Set(['sensor', 'limit', 'safe', 'time']),
    );
    expect(result.switches.length).to.be.greaterThan(20);
    expect(result.readings).to.equal(all.filter((r) => r.time.getTime() <= TO).length);
    expect(await store.actions.listByGroup('gh')).to.deep.equal(before.actions);
    expect(await store.actionHistory.list('gh', undefined, 1000)).to.deep.equal(before.history);
    expect(await store.engineState.list()).to.deep.equal(before.state);
    expect(await store.notifications.listCopies('gh')).to.deep.equal(before.notifications);
    expect(await store.automationLog.listByGroup('gh', 10)).to.deep.equal([]);
    expect(await store.actions.revision('gh')).to.equal(before.revision);

    // Each action's on-time is the sum of its on spans by those switches.
    for (const { object, onMs, switches } of result.actions) {
      const mine = result.switches.filter((s) => s.object === object);
      expect(switches).to.equal(mine.length);
      let expected = 0;
      let since = FROM;
      let on = false;
      for (const s of mine) {
        if (on) expected += s.at.getTime() - since;
        [on, since] = [s.value === 'on', s.at.getTime()];
      }
      expect(onMs).to.equal(on ? expected + TO - since : expected);
    }
  });

  it('when the range is unparseable, backwards, empty or longer than 31 days, or the group unknown, then it is refused', async () => {
    const store = sharedStore();
    const server = await greenhouse(store, new FakeClock(new Date(TO)));
    const run = (from: unknown, to: unknown, group = 'gh') => server.backtest.execute({ group, from, to });

    await expect(run('yesterday', '2026-02-10T00:00:00Z')).to.be.rejectedWith(InvalidInputError, /from/);
    await expect(run('2026-02-10T00:00:00Z', undefined)).to.be.rejectedWith(InvalidInputError, /to/);
    await expect(run('2026-02-10T00:00:00Z', '2026-02-09T00:00:00Z')).to.be.rejectedWith(
      InvalidInputError,
      'to must be after from',
    );
    await expect(run('2026-02-10T00:00:00Z', '2026-02-10T00:00:00Z')).to.be.rejectedWith(InvalidInputError);
    await expect(run('2026-01-01T00:00:00Z', '2026-02-01T00:00:01Z')).to.be.rejectedWith(
      InvalidInputError,
      'to must be at most 31 days after from',
    );
    await expect(run('2026-02-10T00:00:00Z', '2026-02-10T01:00:00Z', 'nowhere')).to.be.rejectedWith(
      NotFoundError,
    );
  });
});
