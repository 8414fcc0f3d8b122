import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError, sensorTopics } from '@hortus/core';
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

const person = { kind: 'cli' } as const;

async function cycledGreenhouse(automations: Parameters<typeof greenhouse>[1], start: string) {
  const store = sharedStore();
  const clock = new FakeClock(new Date(start));
  const server = instance(store, clock);
  await greenhouse(server, automations);
  await server.setLimit.execute({
    group: 'gh',
    object: 'pump_1',
    minOnMs: 5 * 60_000,
    minOffMs: 10 * 60_000,
  });
  const switchTo = (value: string, by: Instance = server) =>
    by.setValue.execute({ group: 'gh', object: 'pump_1', value, actor: person });
  const temperature = async (value: number) => {
    const at = clock.now().toISOString();
    await server.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value, time: at }]);
  };
  return { store, clock, server, switchTo, temperature };
}

describe('minimum on-time and off-time of an action', () => {
  it('when a sensor crossing comes during the minimum off-time after a person switched the pump off, then the engine switches it on only when the off-time is over, and the person was obeyed', async () => {
    const { store, clock, server, switchTo, temperature } = await cycledGreenhouse(
      sensorRule('above', '28'),
      '2026-06-10T12:00:00Z',
    );
    await switchTo('on');
    await switchTo('off');
    expect(await pumpValue(store), 'a person is always obeyed').to.equal('off');

    clock.set('2026-06-10T12:01:00Z');
    await temperature(30);
    expect((await server.engine.tick()).switched, 'held by the minimum off-time').to.deep.equal([]);
    clock.set('2026-06-10T12:09:59Z');
    expect((await server.engine.tick()).switched).to.deep.equal([]);

    clock.set('2026-06-10T12:10:00Z');
    const due = await server.engine.tick();
    expect(due.evaluated, 'the end of the hold is a due time').to.deep.equal(['gh']);
    expect(due.switched.map(({ value, trigger }) => ({ value, trigger }))).to.deep.equal([
      { value: 'on', trigger: 'sensor' },
    ]);
  });

  it("when a time rule's slot comes during the minimum on-time, then it fires once the on-time is over, even past its grace", async () => {
    const { store, clock, server, switchTo } = await cycledGreenhouse(
      timeRule('20:00', 'every day', 'off'),
      '2026-06-10T17:58:00Z',
    );
    await server.setLimit.execute({ group: 'gh', object: 'pump_1', minOnMs: 10 * 60_000 });
    await switchTo('on'); // 19:58 in Berlin
    clock.set('2026-06-10T18:00:30Z');
    expect((await server.engine.tick()).switched, 'held: on for 10 minutes at least').to.deep.equal([]);
    clock.set('2026-06-10T18:07:59Z');
    expect((await server.engine.tick()).switched).to.deep.equal([]);
    expect(await pumpValue(store)).to.equal('on');

    clock.set('2026-06-10T18:08:00Z');
    const due = await server.engine.tick();
    expect(due.switched.map(({ value, trigger }) => ({ value, trigger }))).to.deep.equal([
      { value: 'off', trigger: 'time' },
    ]);
    clock.set('2026-06-10T18:09:00Z');
    expect((await server.engine.tick()).switched, 'once').to.deep.equal([]);
  });

  it('when the server restarts during a hold, then the new engine keeps it: the last switch is read from the store', async () => {
    const { store, clock, switchTo, temperature } = await cycledGreenhouse(
      sensorRule('above', '28'),
      '2026-06-10T12:00:00Z',
    );
    await switchTo('off');
    clock.set('2026-06-10T12:02:00Z');
    await temperature(30);
    const restarted = instance(store, clock);
    expect((await restarted.engine.tick()).switched, 'the first tick after the restart').to.deep.equal([]);
    clock.set('2026-06-10T12:10:00Z');
    expect((await restarted.engine.tick()).switched.map((event) => event.value)).to.deep.equal(['on']);
  });

  it('when the maximum on-time is shorter than the minimum on-time, then the maximum wins', async () => {
    const { store, clock, server, switchTo } = await cycledGreenhouse([], '2026-06-10T12:00:00Z');
    await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 60_000, minOnMs: 3_600_000 });
    await switchTo('on');
    await server.engine.tick();
    clock.set('2026-06-10T12:01:00Z');
    expect((await server.engine.tick()).switched.map((event) => event.trigger)).to.deep.equal(['limit']);
    expect(await pumpValue(store)).to.equal('off');
  });

  it('when the server was down while a limited pump stayed on, then the first tick after the restart switches it off', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T11:20:00Z'));
    const before = instance(store, clock);
    await greenhouse(before, []);
    await before.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 30 * 60_000 });
    await before.setValue.execute({ group: 'gh', object: 'pump_1', value: 'on', actor: person });
    await before.engine.tick(); // it saw the pump on: "on since" 11:20 is in the store

    clock.set('2026-06-10T12:00:00Z'); // back 40 minutes later
    const after = instance(store, clock);
    const first = await after.engine.tick();
    expect(first.switched.map(({ value, trigger }) => ({ value, trigger }))).to.deep.equal([
      { value: 'off', trigger: 'limit' },
    ]);
  });

  it('when the limits are set, shown and removed, then the other limits of the action are kept', async () => {
    const { server } = await cycledGreenhouse([], '2026-06-10T12:00:00Z');
    const withMax = await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 1_800_000 });
    expect(withMax.limit).to.deep.equal({ maxOnMs: 1_800_000, minOnMs: 300_000, minOffMs: 600_000 });
    const removed = await server.setLimit.execute({ group: 'gh', object: 'pump_1', minOnMs: null });
    expect(removed.limit).to.deep.equal({ maxOnMs: 1_800_000, minOffMs: 600_000 });
    await expect(
      server.setLimit.execute({ group: 'gh', object: 'pump_1', minOffMs: 5000 }),
    ).to.be.rejectedWith(InvalidInputError, 'min-off must be a whole number from 10000 to 86400000');
    await expect(server.setLimit.execute({ group: 'gh', object: 'pump_1' })).to.be.rejectedWith(
      InvalidInputError,
    );
  });
});
