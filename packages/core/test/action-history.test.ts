import {
  ACTION_HISTORY_KEEP,
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
  actorOf,
  CreateAction,
  DeleteAction,
  DeleteGroup,
  InvalidInputError,
  ListActionHistory,
  NotFoundError,
  SetActionValue,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';
import { FakeClock, greenhouse, instance, sharedStore, timeRule } from './automation-support.js';

const GROUP = 'greenhouse-a';

describe('action history use cases (docs/api.md, Action history)', () => {
  let app: TestApp;

  beforeEach(async () => {
    app = createTestApp({ now: '2026-06-10T08:00:00.000Z' });
    for (const object of ['pump_1', 'led_1']) await app.get(CreateAction).execute({ group: GROUP, object });
  });

  const set = (object: string, value: string, actor: Parameters<typeof actorOf>[0]): Promise<unknown> =>
    app.get(SetActionValue).execute({ group: GROUP, object, value, actor: actorOf(actor) });

  it('when actions are switched by a user, a key and the console, then the history names each actor, newest first, at the clock time', async () => {
    await set('pump_1', 'on', { kind: 'user', userId: 'u-1', group: GROUP, role: 'operator' });
    app.clock.advance(60_000);
    await set('led_1', 'on', {
      kind: 'key',
      key: { id: 'k-1', name: 'dashboard', kind: 'client', groups: [], createdAt: new Date(0) },
    });
    app.clock.advance(60_000);
    await set('pump_1', 'off', { kind: 'operator' });

    const history = await app.get(ListActionHistory).execute({ group: GROUP });

    expect(history.map((entry) => [entry.object, entry.value, entry.actor])).to.deep.equal([
      ['pump_1', 'off', { kind: 'cli' }],
      ['led_1', 'on', { kind: 'key', id: 'k-1' }],
      ['pump_1', 'on', { kind: 'user', id: 'u-1' }],
    ]);
    expect(history[0]?.at.toISOString()).to.equal('2026-06-10T08:02:00.000Z');
  });

  it('when a request without a credential switches an action, then its actor is anonymous', async () => {
    await set('pump_1', 'on', { kind: 'anonymous' });
    const [entry] = await app.get(ListActionHistory).execute({ group: GROUP, object: 'pump_1' });
    expect(entry?.actor).to.deep.equal({ kind: 'anonymous' });
  });

  it('when one action is asked for with a limit, then only its newest entries come', async () => {
    for (const value of ['on', 'off', 'on']) await set('pump_1', value, { kind: 'operator' });
    await set('led_1', 'on', { kind: 'operator' });

    const history = await app.get(ListActionHistory).execute({ group: GROUP, object: 'pump_1', limit: 2 });

    expect(history.map((entry) => [entry.object, entry.value])).to.deep.equal([
      ['pump_1', 'on'],
      ['pump_1', 'off'],
    ]);
  });

  it('when a switch is refused, then nothing is recorded', async () => {
    await expect(
      app.get(SetActionValue).execute({ group: GROUP, object: 'fan_9', value: 'on', actor: { kind: 'cli' } }),
    ).to.be.rejectedWith(NotFoundError);
    await expect(
      app.get(SetActionValue).execute({ group: GROUP, object: 'pump_1', value: '', actor: { kind: 'cli' } }),
    ).to.be.rejectedWith(InvalidInputError);
    expect(await app.get(ListActionHistory).execute({ group: GROUP })).to.deep.equal([]);
  });

  it('when the limit is out of range or the action unknown, then it is refused', async () => {
    for (const limit of [0, ACTION_HISTORY_KEEP + 1, 'ten', 1.5]) {
      await expect(
        app.get(ListActionHistory).execute({ group: GROUP, limit }),
        String(limit),
      ).to.be.rejectedWith(InvalidInputError, /limit/u);
    }
    await expect(app.get(ListActionHistory).execute({ group: GROUP, object: 'fan_9' })).to.be.rejectedWith(
      NotFoundError,
      /fan_9/u,
    );
  });

  it('when more than ACTION_HISTORY_KEEP switches are recorded, then the action keeps the newest ACTION_HISTORY_KEEP', async () => {
    const repository = app.container.get<ActionHistoryRepository>(ACTION_HISTORY_REPOSITORY);
    for (let i = 0; i < ACTION_HISTORY_KEEP + 5; i += 1) {
      await app.get(SetActionValue).apply(GROUP, 'pump_1', `v${i}`, { kind: 'cli' });
    }
    const kept = await repository.list(GROUP, 'pump_1', ACTION_HISTORY_KEEP * 2);
    expect(kept).to.have.length(ACTION_HISTORY_KEEP);
    expect(kept[0]?.value).to.equal(`v${ACTION_HISTORY_KEEP + 4}`);
    expect(kept.at(-1)?.value).to.equal('v5');
  });

  it('when an action or its group is deleted, then its history goes with it', async () => {
    await set('pump_1', 'on', { kind: 'operator' });
    await set('led_1', 'on', { kind: 'operator' });

    await app.get(DeleteAction).execute({ group: GROUP, object: 'pump_1' });
    expect((await app.get(ListActionHistory).execute({ group: GROUP })).map((e) => e.object)).to.deep.equal([
      'led_1',
    ]);
    await app.get(DeleteGroup).execute({ group: GROUP, confirm: true });
    expect(await app.get(ListActionHistory).execute({ group: GROUP })).to.deep.equal([]);
  });

  it('when the automation engine switches an action, then the history names the engine and the kind of rule', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T04:29:00Z')); // 06:29 in Berlin
    const server = instance(store, clock);
    await greenhouse(server, timeRule('06:30', 'every day'));
    clock.set('2026-06-10T04:30:05Z');

    expect(await server.run.execute()).to.have.length(1);

    const history = await store.actionHistory.list('gh', 'pump_1', 10);
    expect(history.map((entry) => [entry.value, entry.actor])).to.deep.equal([
      ['on', { kind: 'engine', id: 'time' }],
    ]);
    expect(history[0]?.at.toISOString()).to.equal('2026-06-10T04:30:05.000Z');
  });

  it('when the maximum on-time switches a pump off, then the history shows the user switching it on and the engine (limit) off', async () => {
    const store = sharedStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const server = instance(store, clock);
    await greenhouse(server, []);
    await server.setLimit.execute({ group: 'gh', object: 'pump_1', maxOnMs: 30 * 60_000 });
    await server.setValue.execute({
      group: 'gh',
      object: 'pump_1',
      value: 'on',
      actor: { kind: 'user', id: 'u-1' },
    });
    // The engine times the on-time from the tick that first sees the pump on.
    expect((await server.engine.tick()).switched).to.have.length(0);

    clock.set('2026-06-10T12:30:05Z');
    expect((await server.engine.tick()).switched).to.have.length(1);

    const history = await store.actionHistory.list('gh', 'pump_1', 10);
    expect(history.map((entry) => [entry.value, entry.actor])).to.deep.equal([
      ['off', { kind: 'engine', id: 'limit' }],
      ['on', { kind: 'user', id: 'u-1' }],
    ]);
  });
});
