import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError, NotFoundError, readActionLimits, sensorTopics } from '@hortus/core';
import {
  FakeClock,
  greenhouse,
  instance,
  type Instance,
  pumpValue,
  sensorRule,
  sharedStore,
  timeRule,
} from './automation-support.js';

chai.use(chaiAsPromised);
const { expect } = chai;

const THIRTY_MINUTES = 30 * 60_000;

async function limitedPump(server: Instance, automations = timeRule('23:00', 'every day')): Promise<void> {
  await greenhouse(server, automations);
  await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: THIRTY_MINUTES });
}

/** One server over a fresh store at `start`, with the limited pump of `automations`. */
async function limitedGreenhouse(
  automations?: Parameters<typeof limitedPump>[1],
  start = '2026-06-10T12:00:00Z',
) {
  const store = sharedStore();
  const clock = new FakeClock(new Date(start));
  const server = instance(store, clock);
  await limitedPump(server, automations);
  /** A user's switch from the CLI. */
  const switchOn = () =>
    server.setValue.execute({ group: 'gh', object: 'pump_1', value: 'on', actor: { kind: 'cli' } });
  return { store, clock, server, switchOn };
}

describe('maximum on-time of an action', () => {
  it('when a user switches a limited pump on, then the engine switches it off once the limit has passed, once, and logs why', async () => {
    const { store, clock, server, switchOn } = await limitedGreenhouse();
    await switchOn();
    expect((await server.engine.tick()).switched).to.have.length(0);

    clock.set('2026-06-10T12:29:50Z');
    expect((await server.engine.tick()).switched, 'not yet').to.have.length(0);
    expect(await pumpValue(store)).to.equal('on');

    clock.set('2026-06-10T12:30:05Z');
    const tick = await server.engine.tick();
    expect(tick.switched).to.have.length(1);
    expect(tick.switched[0]).to.include({
      object: 'pump_1',
      value: 'off',
      previousValue: 'on',
      trigger: 'limit',
      rule: 'on longer than 30m -> off',
    });
    expect(await pumpValue(store)).to.equal('off');

    clock.set('2026-06-10T12:31:00Z');
    expect((await server.engine.tick()).switched).to.have.length(0);
    const log = await store.automationLog.listByGroup('gh', 10);
    expect(log.map((event) => event.trigger)).to.deep.equal(['limit']);
  });

  it('when the group stays idle, then the deadline is a due time of the engine: only the tick at it evaluates the group', async () => {
    const { clock, server, switchOn } = await limitedGreenhouse([]);
    await switchOn();
    await server.engine.tick();

    clock.set('2026-06-10T12:10:00Z');
    expect((await server.engine.tick()).evaluated, 'nothing changed, nothing due').to.deep.equal([]);
    clock.set('2026-06-10T12:30:00Z');
    const due = await server.engine.tick();
    expect(due.evaluated).to.deep.equal(['gh']);
    expect(due.switched.map((event) => event.value)).to.deep.equal(['off']);
  });

  it('when two servers share the store and both pass the deadline, then the pump is switched off once', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const first = instance(store, clock);
    const second = instance(store, clock);
    await limitedPump(first, []);
    await first.setValue.execute({ group: 'gh', object: 'pump_1', value: 'on', actor: { kind: 'cli' } });
    await Promise.all([first.engine.tick(), second.engine.tick()]);

    clock.set('2026-06-10T12:31:00Z');
    const [a, b] = await Promise.all([first.engine.tick(), second.engine.tick()]);
    expect(a.switched.length + b.switched.length).to.equal(1);
    expect(await store.automationLog.listByGroup('gh', 10)).to.have.length(1);
  });

  it('when the limit switched it off, then a sensor rule does not switch it on again during the rest, and may after it', async () => {
    const { store, clock, server } = await limitedGreenhouse(sensorRule('above', '28'));
    const reading = async (at: string, value: number): Promise<string[]> => {
      clock.set(at);
      await server.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value }]);
      return (await server.engine.tick()).switched.map((event) => `${event.trigger} ${event.value}`);
    };

    expect(await reading('2026-06-10T12:00:00Z', 31)).to.deep.equal(['sensor on']);
    expect(await reading('2026-06-10T12:30:01Z', 31)).to.deep.equal(['limit off']);
    expect(await reading('2026-06-10T12:35:00Z', 31), 'still hot: the crossing is spent').to.deep.equal([]);
    expect(await reading('2026-06-10T12:40:00Z', 20)).to.deep.equal([]);
    expect(await reading('2026-06-10T12:45:00Z', 31), 'a new crossing within the rest').to.deep.equal([]);
    expect(await pumpValue(store)).to.equal('off');
    expect(await reading('2026-06-10T13:05:00Z', 20)).to.deep.equal([]);
    expect(await reading('2026-06-10T13:10:00Z', 31), 'a new crossing after the rest').to.deep.equal([
      'sensor on',
    ]);
  });

  it('when a time rule switches it on, then the limit switches it off and the slot does not switch it on again', async () => {
    const { store, clock, server } = await limitedGreenhouse(
      timeRule('06:30', 'every day'),
      '2026-06-10T04:30:05Z', // 06:30 in Berlin
    );
    expect((await server.engine.tick()).switched.map((event) => event.trigger)).to.deep.equal(['time']);
    clock.set('2026-06-10T05:00:10Z');
    expect((await server.engine.tick()).switched.map((event) => event.trigger)).to.deep.equal(['limit']);
    clock.set('2026-06-10T05:01:00Z');
    expect((await server.engine.tick()).switched).to.have.length(0);
    expect(await pumpValue(store)).to.equal('off');
  });

  it('when a user switches it on during the rest, then that is allowed, and the limit counts again from then', async () => {
    const { clock, server, switchOn } = await limitedGreenhouse([]);
    await switchOn();
    await server.engine.tick();
    clock.set('2026-06-10T12:30:00Z');
    await server.engine.tick();
    clock.set('2026-06-10T12:40:00Z');
    await switchOn();
    expect((await server.engine.tick()).switched).to.have.length(0);
    clock.set('2026-06-10T13:09:00Z');
    expect((await server.engine.tick()).switched).to.have.length(0);
    clock.set('2026-06-10T13:10:00Z');
    expect((await server.engine.tick()).switched.map((event) => event.trigger)).to.deep.equal(['limit']);
  });

  it('when the limit is removed, then the engine leaves the pump on', async () => {
    const { store, clock, server, switchOn } = await limitedGreenhouse([]);
    await switchOn();
    await server.engine.tick();
    const removed = await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: null });
    expect(removed).to.deep.equal({ group: 'gh', object: 'pump_1' });
    clock.set('2026-06-10T14:00:00Z');
    expect((await server.engine.tick()).switched).to.have.length(0);
    expect(await pumpValue(store)).to.equal('on');
  });

  it('when a limit is bad or names no action, then it is refused and nothing is written', async () => {
    const store = sharedStore();
    const server = instance(store, new FakeClock(new Date('2026-06-10T12:00:00Z')));
    await greenhouse(server, []);
    for (const maxOnMs of [30_000, 8 * 24 * 3_600_000, 'soon', 1.5 * 60_000 + 0.5])
      await expect(server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs })).to.be.rejectedWith(
        InvalidInputError,
      );
    await expect(
      server.setLimit.execute({ group: 'gh', object: 'pump_9', maxOnMs: THIRTY_MINUTES }),
    ).to.be.rejectedWith(NotFoundError, 'no action pump_9 in group gh');
    await expect(
      server.setLimit.execute({ group: 'nope', object: 'pump_1', maxOnMs: THIRTY_MINUTES }),
    ).to.be.rejectedWith(NotFoundError);
    expect((await store.groups.findByName('gh'))?.settings).to.deep.equal([]);
  });

  it('when a client replaces the settings without the limits, then the limits are kept; with them, they are replaced', async () => {
    const store = sharedStore();
    const server = instance(store, new FakeClock(new Date('2026-06-10T12:00:00Z')));
    await limitedPump(server, []);
    const kept = await server.updateSettings.execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    expect(kept.settings).to.deep.equal([
      { tempMax: 30 },
      { actionLimits: { pump_1: { maxOnMs: THIRTY_MINUTES } } },
    ]);
    const replaced = await server.updateSettings.execute({
      name: 'gh',
      settings: { tempMax: 30, actionLimits: { pump_1: { maxOnMs: 3_600_000 } } },
    });
    expect(readActionLimits(replaced.settings).get('pump_1')).to.deep.equal({ maxOnMs: 3_600_000 });
  });
});
