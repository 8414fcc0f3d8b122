import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type AutomationSet, InvalidInputError, sensorTopics } from '@hortus/core';
import { FakeClock, instance, type Instance, type SharedStore, sharedStore } from './automation-support.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const TEMPERATURE = sensorTopics.temperature;

/** A heater kept between 18 and 21 degrees by two sensor rules, as a thermostat does. */
const thermostat: AutomationSet[] = [
  {
    timeAutomations: [],
    sensorAutomations: [
      { action: 'on', sensor: 'temperature', condition: 'less than', value: '18' },
      { action: 'off', sensor: 'temperature', condition: 'above', value: '21' },
    ],
  },
];

async function greenhouseWith(server: Instance, object: string, automations: AutomationSet[]): Promise<void> {
  await server.createGroup.execute({ name: 'gh', settings: [] });
  await server.createAction.execute({ group: 'gh', object, value: 'off', automations });
}

/** What a box sends: a reading as text, `nan` when its sensor failed (refused, so never stored). */
async function boxSends(server: Instance, value: string, time: string): Promise<number> {
  const result = await server.record.execute([{ group: 'gh', topic: TEMPERATURE, value, time }]);
  return result.stored;
}

const valueOf = async (store: SharedStore, object: string) => (await store.actions.find('gh', object))?.value;

async function heatedGreenhouse() {
  const store = sharedStore();
  const clock = new FakeClock(new Date('2026-01-10T03:00:00Z'));
  const server = instance(store, clock);
  await greenhouseWith(server, 'heater_1', thermostat);
  /** The box's round every 20 s from `from` to `to` (ISO), sending `value`. */
  const rounds = async (value: string, from: string, to: string) => {
    for (let at = Date.parse(from); at <= Date.parse(to); at += 20_000) {
      clock.set(new Date(at).toISOString());
      await boxSends(server, value, new Date(at).toISOString());
      await server.engine.tick();
    }
  };
  return { store, clock, server, rounds };
}

describe('safe mode: an action whose sensors all went stale', () => {
  it('when the heater was switched on by a rule and its sensor then sends only nan (Home Assistant #63419), then the heater goes to its safe state off once, with trigger safe and one notification, and its rules take over when fresh data returns', async () => {
    const { store, clock, server, rounds } = await heatedGreenhouse();
    await rounds('15.00', '2026-01-10T03:00:00Z', '2026-01-10T03:02:00Z');
    expect(await valueOf(store, 'heater_1'), 'cold: the rule switched it on').to.equal('on');

    // The sensor fails; the box keeps polling and sends `nan`, which is refused.
    expect(await boxSends(server, 'nan', '2026-01-10T03:02:20Z')).to.equal(0);
    await rounds('nan', '2026-01-10T03:02:20Z', '2026-01-10T03:11:40Z');
    expect(await valueOf(store, 'heater_1'), 'not yet 10 minutes').to.equal('on');

    clock.set('2026-01-10T03:12:01Z');
    const tick = await server.engine.tick();
    expect(tick.switched.map(({ object, value, trigger }) => ({ object, value, trigger }))).to.deep.equal([
      { object: 'heater_1', value: 'off', trigger: 'safe' },
    ]);
    expect(tick.switched[0]?.rule).to.equal(`no fresh reading of ${TEMPERATURE} for 10m -> off`);
    expect(tick.inSafeMode).to.equal(1);
    expect(await valueOf(store, 'heater_1')).to.equal('off');
    const opened = await server.openNotifications.execute({ group: 'gh' });
    expect(opened.map((n) => n.message)).to.deep.equal([
      `Safe mode: heater_1 is switched off: no fresh reading of ${TEMPERATURE} for 10m`,
    ]);

    await rounds('nan', '2026-01-10T03:12:20Z', '2026-01-10T03:20:00Z');
    const log = await store.automationLog.listByGroup('gh', 10);
    expect(
      log.map((event) => event.trigger),
      'switched once',
    ).to.deep.equal(['safe', 'sensor']);
    expect(await store.notifications.countOpen('gh'), 'one notification').to.equal(1);
    const [listed] = await server.listSafety.execute({ group: 'gh' });
    expect(listed).to.deep.include({
      object: 'heater_1',
      safe: 'off',
      inSafeMode: true,
      since: new Date('2026-01-10T03:12:01Z'),
      silentTopics: [TEMPERATURE],
    });

    // The sensor is replaced: still cold, so the rule switches the heater on again at once.
    clock.set('2026-01-10T03:20:20Z');
    expect(await boxSends(server, '15.50', '2026-01-10T03:20:20Z')).to.equal(1);
    const back = await server.engine.tick();
    expect(back.switched.map(({ value, trigger }) => ({ value, trigger }))).to.deep.equal([
      { value: 'on', trigger: 'sensor' },
    ]);
    expect(back.inSafeMode).to.equal(0);
    const messages = (await server.openNotifications.execute({ group: 'gh' })).map((n) => n.message);
    expect(messages[0]).to.equal(
      'Safe mode over: fresh data for heater_1 is arriving again; its rules apply again',
    );
    expect((await server.listSafety.execute({ group: 'gh' }))[0]?.inSafeMode).to.equal(false);
  });

  it('when the group is idle, then the staleness deadline is a due time: only the tick at it evaluates the group', async () => {
    const { clock, server, rounds } = await heatedGreenhouse();
    await rounds('15.00', '2026-01-10T03:00:00Z', '2026-01-10T03:00:00Z');
    clock.set('2026-01-10T03:00:10Z');
    await server.engine.tick(); // the switch on changed the group
    clock.set('2026-01-10T03:05:00Z');
    expect((await server.engine.tick()).evaluated, 'nothing changed, nothing due').to.deep.equal([]);
    clock.set('2026-01-10T03:10:00.001Z');
    const due = await server.engine.tick();
    expect(due.evaluated).to.deep.equal(['gh']);
    expect(due.switched.map((event) => event.trigger)).to.deep.equal(['safe']);
  });

  it('when a fan goes stale, then its default safe state hold leaves it on, with a notification and no switch', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-07-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouseWith(server, 'ventilator_1', [
      {
        timeAutomations: [],
        sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28' }],
      },
    ]);
    await boxSends(server, '31.00', '2026-07-10T12:00:00Z');
    await server.engine.tick();
    expect(await valueOf(store, 'ventilator_1')).to.equal('on');

    clock.set('2026-07-10T12:30:00Z');
    const tick = await server.engine.tick();
    expect(tick.switched).to.deep.equal([]);
    expect(tick.inSafeMode).to.equal(1);
    expect(await valueOf(store, 'ventilator_1')).to.equal('on');
    expect((await server.openNotifications.execute({ group: 'gh' })).map((n) => n.message)).to.deep.equal([
      `Safe mode: ventilator_1 is held as it is: no fresh reading of ${TEMPERATURE} for 10m`,
    ]);
  });

  it('when an action has only time rules, then it never enters safe mode', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-07-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouseWith(server, 'led_1', [
      { timeAutomations: [{ action: 'on', time: '06:00', frequency: 'every day' }], sensorAutomations: [] },
    ]);
    await boxSends(server, '20.00', '2026-07-10T10:00:00Z');
    const tick = await server.engine.tick();
    expect(tick.switched.map((event) => event.trigger)).to.deep.equal(['time']);
    expect(tick.inSafeMode).to.equal(0);
    expect((await server.listSafety.execute({ group: 'gh' }))[0]).to.deep.include({
      safe: 'off',
      inSafeMode: false,
      topics: [],
    });
    expect((await server.listSafety.execute({ group: 'gh' }))[0]).to.not.have.property('staleAfterMs');
  });

  it('when a topic reports every 5 minutes, then its freshness limit defaults to 3 intervals (15 minutes), and a chosen one wins', async () => {
    const { store, clock, server } = await heatedGreenhouse();
    for (let minute = 0; minute <= 50; minute += 5) {
      const at = new Date(Date.parse('2026-01-10T02:10:00Z') + minute * 60_000).toISOString();
      await boxSends(server, '19.00', at);
    }
    clock.set('2026-01-10T03:00:00Z');
    expect((await server.listSafety.execute({ group: 'gh' }))[0]?.staleAfterMs).to.equal(15 * 60_000);
    await store.actions.setValue('gh', 'heater_1', 'on');
    clock.set('2026-01-10T03:12:00Z');
    expect((await server.engine.tick()).switched, '12 minutes: still fresh').to.deep.equal([]);
    clock.set('2026-01-10T03:15:01Z');
    expect((await server.engine.tick()).switched.map((event) => event.trigger)).to.deep.equal(['safe']);

    await server.setSafety.execute({ group: 'gh', object: 'heater_1', safe: 'on', staleAfterMs: 3_600_000 });
    const [chosen] = await server.listSafety.execute({ group: 'gh' });
    expect(chosen).to.deep.include({ safe: 'on', staleAfterMs: 3_600_000, staleAfterChosen: true });
  });

  it('when two servers share the store, or one restarts, then the safe state is switched and notified once', async () => {
    const { store, clock, server, rounds } = await heatedGreenhouse();
    await rounds('15.00', '2026-01-10T03:00:00Z', '2026-01-10T03:00:00Z');
    const other = instance(store, clock);
    clock.set('2026-01-10T03:11:00Z');
    const [first, second] = await Promise.all([server.engine.tick(), other.engine.tick()]);
    expect([...(first?.switched ?? []), ...(second?.switched ?? [])].map((e) => e.trigger)).to.deep.equal([
      'safe',
    ]);
    const restarted = instance(store, clock);
    clock.set('2026-01-10T03:12:00Z');
    expect((await restarted.engine.tick()).switched).to.deep.equal([]);
    expect(await store.notifications.countOpen('gh')).to.equal(1);
    expect((await restarted.listSafety.execute({ group: 'gh' }))[0]?.inSafeMode).to.equal(true);
  });

  it('when the safety settings are bad or name no action, then they are refused', async () => {
    const { server } = await heatedGreenhouse();
    await expect(
      server.setSafety.execute({ group: 'gh', object: 'heater_1', safe: 'sometimes' }),
    ).to.be.rejectedWith(InvalidInputError, 'safe must be one of: off, on, hold');
    await expect(
      server.setSafety.execute({ group: 'gh', object: 'heater_1', staleAfterMs: 60_000 }),
    ).to.be.rejectedWith(InvalidInputError);
    await expect(server.setSafety.execute({ group: 'gh', object: 'pump_9', safe: 'off' })).to.be.rejectedWith(
      'no action pump_9 in group gh',
    );
  });
});
