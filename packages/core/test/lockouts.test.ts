import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type AutomationSet, InvalidInputError, NotFoundError, sensorTopics } from '@hortus/core';
import { FakeClock, instance, type Instance, sharedStore, type SharedStore } from './automation-support.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const TEMPERATURE = sensorTopics.temperature;
const person = { kind: 'cli' } as const;

const rules = (
  timeAutomations: AutomationSet['timeAutomations'],
  sensorAutomations: AutomationSet['sensorAutomations'] = [],
): AutomationSet[] => [{ timeAutomations, sensorAutomations }];

async function lockedGreenhouse(start: string, actions: Record<string, AutomationSet[]>) {
  const store = sharedStore();
  const clock = new FakeClock(new Date(start));
  const server = instance(store, clock, 'UTC');
  await server.createGroup.execute({ name: 'gh', settings: [] });
  for (const [object, automations] of Object.entries(actions))
    await server.createAction.execute({ group: 'gh', object, value: 'off', automations });
  /** A reading sent now, or at `at` (the clock moves there: a reading from the future is refused). */
  const temperature = (value: number, at?: string) => {
    if (at !== undefined) clock.set(at);
    return server.record.execute([
      { group: 'gh', topic: TEMPERATURE, value, time: clock.now().toISOString() },
    ]);
  };
  const tick = async (at: string) => {
    clock.set(at);
    return server.engine.tick();
  };
  const switchTo = (object: string, value: string) =>
    server.setValue.execute({ group: 'gh', object, value, actor: person });
  return { store, clock, server, temperature, tick, switchTo };
}

const valueOf = async (store: SharedStore, object: string) => (await store.actions.find('gh', object))?.value;
const brief = (events: readonly { object: string; value: string; trigger: string }[]) =>
  events.map(({ object, value, trigger }) => `${object} ${value} (${trigger})`);

const frost = (server: Instance, object = 'pump_1') =>
  server.addLockout.execute({ group: 'gh', object, lockout: { sensor: 'temperature', below: 2 } });

describe('lockouts: conditions that keep the engine from switching an action on (issue 34 item 4)', () => {
  it('when frost holds at the slot of "on 06:00", then the pump stays off, the block is reported once, and the slot fires when the frost ends within its grace', async () => {
    const { store, server, temperature, tick } = await lockedGreenhouse('2026-01-10T05:50:00Z', {
      pump_1: rules([{ action: 'on', time: '06:00', frequency: 'every day' }]),
    });
    await frost(server);
    await temperature(1.2, '2026-01-10T05:59:00Z');
    const first = await tick('2026-01-10T06:00:05Z');
    expect(first.switched).to.deep.equal([]);
    expect(first.blocked).to.deep.equal([
      {
        group: 'gh',
        object: 'pump_1',
        by: '06:00 every day -> on',
        reason: `${TEMPERATURE} below 2 (1.2)`,
      },
    ]);
    expect((await tick('2026-01-10T06:00:15Z')).blocked, 'reported once').to.deep.equal([]);
    // Within the dead band (0.5) of the threshold it still holds.
    await temperature(2.3, '2026-01-10T06:01:00Z');
    expect((await tick('2026-01-10T06:01:05Z')).switched).to.deep.equal([]);
    await temperature(2.6, '2026-01-10T06:02:00Z');
    expect(brief((await tick('2026-01-10T06:02:05Z')).switched)).to.deep.equal(['pump_1 on (time)']);
    expect(await valueOf(store, 'pump_1')).to.equal('on');
  });

  it('when the lockout input is missing or stale, then the action counts as blocked (unknown is not safe)', async () => {
    const { server, temperature, tick } = await lockedGreenhouse('2026-01-10T05:50:00Z', {
      pump_1: rules([{ action: 'on', time: '06:00', frequency: 'every day' }]),
    });
    await frost(server);
    const missing = await tick('2026-01-10T06:00:05Z');
    expect(missing.switched).to.deep.equal([]);
    expect(missing.blocked.map(({ reason }) => reason)).to.deep.equal([`no reading of ${TEMPERATURE}`]);
    await temperature(12, '2026-01-10T05:40:00Z');
    const stale = await tick('2026-01-10T06:00:10Z');
    expect(stale.switched).to.deep.equal([]);
    expect(
      stale.blocked.map(({ reason }) => reason),
      'a new reason is reported again',
    ).to.deep.equal([`no fresh reading of ${TEMPERATURE} for 10m`]);
    const [listed] = await server.listLockouts.execute({ group: 'gh' });
    expect(listed?.lockouts).to.deep.equal([
      {
        id: 1,
        topic: TEMPERATURE,
        condition: 'below',
        value: 2,
        text: `${TEMPERATURE} below 2`,
        active: true,
        reason: `no fresh reading of ${TEMPERATURE} for 10m`,
      },
    ]);
    await temperature(12, '2026-01-10T06:00:20Z');
    expect(brief((await tick('2026-01-10T06:00:30Z')).switched)).to.deep.equal(['pump_1 on (time)']);
  });

  it('when heater_1 is locked while ventilator_1 is on, then its sensor rule waits, switches once the fan is off, and the heater goes off when a person switches the fan on again', async () => {
    const { store, server, temperature, tick, switchTo } = await lockedGreenhouse('2026-01-10T12:00:00Z', {
      heater_1: rules(
        [],
        [
          { action: 'on', sensor: 'temperature', condition: 'less than', value: '18' },
          { action: 'off', sensor: 'temperature', condition: 'above', value: '21' },
        ],
      ),
      ventilator_1: [],
    });
    await server.addLockout.execute({
      group: 'gh',
      object: 'heater_1',
      lockout: { while: 'ventilator_1', is: 'on' },
    });
    await switchTo('ventilator_1', 'on');
    await temperature(15);
    const blocked = await tick('2026-01-10T12:00:10Z');
    expect(blocked.switched).to.deep.equal([]);
    expect(blocked.blocked.map(({ by, reason }) => `${by}: ${reason}`)).to.deep.equal([
      'temperature less than 18 -> on: ventilator_1 is on',
    ]);
    await switchTo('ventilator_1', 'off');
    expect(brief((await tick('2026-01-10T12:00:20Z')).switched), 'the crossing was kept').to.deep.equal([
      'heater_1 on (sensor)',
    ]);
    await switchTo('ventilator_1', 'on');
    const off = await tick('2026-01-10T12:00:30Z');
    expect(brief(off.switched)).to.deep.equal(['heater_1 off (lockout)']);
    expect(off.switched[0]?.rule).to.equal('lockout: ventilator_1 is on -> off');
    expect(await valueOf(store, 'heater_1')).to.equal('off');
    const [entry] = await store.actionHistory.list('gh', 'heater_1', 1);
    expect(entry?.actor).to.deep.equal({ kind: 'engine', id: 'lockout' });
    // The lockout ends: the rule applies as if new (after its switch interval), and it is still cold.
    await switchTo('ventilator_1', 'off');
    expect(brief((await tick('2026-01-10T12:01:30Z')).switched)).to.deep.equal(['heater_1 on (sensor)']);
  });

  it('when the engine switches both in one tick, then the heater does not stay on beside the fan', async () => {
    const { store, server, temperature, tick } = await lockedGreenhouse('2026-01-10T12:00:00Z', {
      heater_1: rules([], [{ action: 'on', sensor: 'temperature', condition: 'less than', value: '18' }]),
      ventilator_1: rules([], [{ action: 'on', sensor: 'temperature', condition: 'less than', value: '18' }]),
    });
    await server.addLockout.execute({
      group: 'gh',
      object: 'heater_1',
      lockout: { while: 'ventilator_1', is: 'on' },
    });
    await temperature(15);
    await tick('2026-01-10T12:00:10Z');
    expect([await valueOf(store, 'heater_1'), await valueOf(store, 'ventilator_1')]).to.deep.equal([
      'off',
      'on',
    ]);
  });

  it('when a person switches the pump on during frost, then the switch is obeyed and kept, reported once, and the maximum on-time still ends it', async () => {
    const { store, server, temperature, tick, switchTo } = await lockedGreenhouse('2026-01-10T05:00:00Z', {
      pump_1: [],
    });
    await frost(server);
    await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 30 * 60_000 });
    await temperature(0.5);
    await switchTo('pump_1', 'on');
    const kept = await tick('2026-01-10T05:00:10Z');
    expect(kept.switched).to.deep.equal([]);
    expect(kept.blocked.map(({ by }) => by)).to.deep.equal(["a person's switch"]);
    expect((await tick('2026-01-10T05:00:20Z')).blocked).to.deep.equal([]);
    expect(await valueOf(store, 'pump_1')).to.equal('on');
    await temperature(0.5, '2026-01-10T05:30:00Z');
    expect(brief((await tick('2026-01-10T05:30:15Z')).switched)).to.deep.equal(['pump_1 off (limit)']);
  });

  describe('which wins when they disagree', () => {
    it('when a lockout becomes active during the minimum on-time, then the lockout wins: off at once', async () => {
      const { store, server, temperature, tick } = await lockedGreenhouse('2026-01-10T05:50:00Z', {
        pump_1: rules([{ action: 'on', time: '06:00', frequency: 'every day' }]),
      });
      await frost(server);
      await server.setLimit.execute({ group: 'gh', object: 'pump_1', minOnMs: 30 * 60_000 });
      await temperature(5, '2026-01-10T06:00:00Z');
      expect(brief((await tick('2026-01-10T06:00:05Z')).switched)).to.deep.equal(['pump_1 on (time)']);
      await temperature(1, '2026-01-10T06:01:00Z');
      const off = await tick('2026-01-10T06:01:05Z');
      expect(brief(off.switched)).to.deep.equal(['pump_1 off (lockout)']);
      expect(off.switched[0]?.rule).to.equal(`lockout: ${TEMPERATURE} below 2 (1) -> off`);
      expect(await valueOf(store, 'pump_1')).to.equal('off');
    });

    it('when every input is stale and the safe state is on, then the lockout wins: it stays off', async () => {
      const { store, server, temperature, tick } = await lockedGreenhouse('2026-01-10T12:00:00Z', {
        pump_1: rules(
          [],
          [{ action: 'off', sensor: 'esp/ground/moisture/1', condition: 'above', value: '70' }],
        ),
      });
      await server.setSafety.execute({ group: 'gh', object: 'pump_1', safe: 'on' });
      await frost(server);
      await server.record.execute([
        { group: 'gh', topic: 'esp/ground/moisture/1', value: 50, time: '2026-01-10T12:00:00Z' },
      ]);
      await temperature(0);
      await tick('2026-01-10T12:00:10Z');
      const stale = await tick('2026-01-10T12:11:00Z');
      expect(stale.inSafeMode).to.equal(1);
      expect(stale.switched).to.deep.equal([]);
      expect(stale.blocked.map(({ by }) => by)).to.deep.equal([
        'no fresh reading of esp/ground/moisture/1 for 10m -> on',
      ]);
      expect(await valueOf(store, 'pump_1')).to.equal('off');
    });

    it('when a fan held by its safe state (hold) meets an active lockout, then the lockout wins: off', async () => {
      const { store, server, temperature, tick } = await lockedGreenhouse('2026-07-10T12:00:00Z', {
        ventilator_1: rules([], [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28' }]),
      });
      await server.addLockout.execute({
        group: 'gh',
        object: 'ventilator_1',
        lockout: { sensor: 'humidity', above: 95 },
      });
      await server.record.execute([
        { group: 'gh', topic: sensorTopics.humidity, value: 60, time: '2026-07-10T12:00:00Z' },
      ]);
      await temperature(31);
      expect(brief((await tick('2026-07-10T12:00:10Z')).switched)).to.deep.equal([
        'ventilator_1 on (sensor)',
      ]);
      // Temperature goes quiet (safe mode: hold), humidity keeps coming and rises past the lockout.
      await server.record.execute([
        { group: 'gh', topic: sensorTopics.humidity, value: 97, time: '2026-07-10T12:15:00Z' },
      ]);
      const tickResult = await tick('2026-07-10T12:15:10Z');
      expect(brief(tickResult.switched)).to.deep.equal(['ventilator_1 off (lockout)']);
      expect(await valueOf(store, 'ventilator_1')).to.equal('off');
    });

    it('when the maximum on-time and a lockout both want it off, then it is switched off once', async () => {
      const { server, temperature, tick } = await lockedGreenhouse('2026-01-10T05:50:00Z', {
        pump_1: rules([{ action: 'on', time: '06:00', frequency: 'every day' }]),
      });
      await frost(server);
      await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 60_000 });
      await temperature(5, '2026-01-10T06:00:00Z');
      await tick('2026-01-10T06:00:05Z');
      await temperature(1, '2026-01-10T06:01:00Z');
      const both = await tick('2026-01-10T06:01:10Z');
      expect(brief(both.switched)).to.deep.equal(['pump_1 off (lockout)']);
    });
  });

  it('when the rules are previewed, then the lockouts are replayed by the engine: frost now keeps "on 06:00" out, a warm reading lets it in until it goes stale', async () => {
    const { server, temperature } = await lockedGreenhouse('2026-01-10T05:55:00Z', {
      pump_1: rules([{ action: 'on', time: '06:00', frequency: 'every day' }]),
    });
    await frost(server);
    await temperature(1);
    const frosty = await server.preview.execute({ group: 'gh', hours: 2 });
    expect(frosty.switches).to.deep.equal([]);
    await temperature(5, '2026-01-10T05:56:00Z');
    const warm = await server.preview.execute({ group: 'gh', hours: 2 });
    expect(warm.switches.map(({ object, value, trigger }) => `${object} ${value} ${trigger}`)).to.deep.equal([
      'pump_1 on time',
      // No reading comes in a preview: 10 minutes after the last one the input is stale, which blocks.
      'pump_1 off lockout',
    ]);
  });

  describe('setting them', () => {
    it('when the same lockout is added twice, then it is kept once; ids are not reused; remove takes one or all', async () => {
      const { store, server } = await lockedGreenhouse('2026-01-10T12:00:00Z', {
        pump_1: [],
        ventilator_1: [],
      });
      await frost(server);
      await frost(server);
      const both = await server.addLockout.execute({
        group: 'gh',
        object: 'pump_1',
        lockout: { while: 'ventilator_1', is: 'ON' },
      });
      expect(both).to.deep.equal([
        { id: 1, topic: TEMPERATURE, condition: 'below', value: 2 },
        { id: 2, while: 'ventilator_1', is: 'on' },
      ]);
      await server.removeLockout.execute({ group: 'gh', object: 'pump_1', id: 1 });
      const third = await frost(server);
      expect(third.map(({ id }) => id)).to.deep.equal([2, 3]);
      await server.removeLockout.execute({ group: 'gh', object: 'pump_1', id: 'all' });
      expect((await store.actions.find('gh', 'pump_1'))?.lockouts).to.equal(undefined);
    });

    it('when a lockout is wrong, then it is refused naming the field, and nothing is written', async () => {
      const { store, server } = await lockedGreenhouse('2026-01-10T12:00:00Z', { pump_1: [] });
      const add = (lockout: unknown, object = 'pump_1') =>
        server.addLockout.execute({ group: 'gh', object, lockout });
      await expect(add({ sensor: 'sunshine', below: 2 })).to.be.rejectedWith(InvalidInputError, /sensor/);
      await expect(add({ sensor: 'temperature' })).to.be.rejectedWith(InvalidInputError, /below/);
      await expect(add({ sensor: 'temperature', below: 2, above: 3 })).to.be.rejectedWith(InvalidInputError);
      await expect(add({ sensor: 'temperature', below: 'cold' })).to.be.rejectedWith(InvalidInputError);
      await expect(add({ while: 'pump_1', is: 'on' })).to.be.rejectedWith(InvalidInputError, /another/);
      await expect(add({ while: 'ventilator_9', is: 'on' })).to.be.rejectedWith(
        InvalidInputError,
        /no action/,
      );
      await expect(add({ while: 'pump_1', is: 'maybe' })).to.be.rejectedWith(InvalidInputError);
      await expect(add({ sensor: 'temperature', below: 2, while: 'x', is: 'on' })).to.be.rejectedWith(
        InvalidInputError,
      );
      await expect(add({ sensor: 'temperature', below: 2 }, 'pump_9')).to.be.rejectedWith(NotFoundError);
      await expect(server.removeLockout.execute({ group: 'gh', object: 'pump_1', id: 4 })).to.be.rejectedWith(
        NotFoundError,
      );
      expect((await store.actions.find('gh', 'pump_1'))?.lockouts).to.equal(undefined);
    });

    it('when the other action of an interlock is deleted, then the lockout blocks', async () => {
      const { server, tick } = await lockedGreenhouse('2026-01-10T05:50:00Z', {
        pump_1: rules([{ action: 'on', time: '06:00', frequency: 'every day' }]),
        ventilator_1: [],
      });
      await server.addLockout.execute({
        group: 'gh',
        object: 'pump_1',
        lockout: { while: 'ventilator_1', is: 'on' },
      });
      await server.deleteAction.execute({ group: 'gh', object: 'ventilator_1' });
      const result = await tick('2026-01-10T06:00:05Z');
      expect(result.switched).to.deep.equal([]);
      expect(result.blocked.map(({ reason }) => reason)).to.deep.equal(['no action ventilator_1']);
    });
  });
});
