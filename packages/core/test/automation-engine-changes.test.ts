import 'reflect-metadata';
import { expect } from './support.js';
import { Container, ContainerModule } from 'inversify';
import {
  ACTION_REPOSITORY,
  type ActionRepository,
  ALERT_OUTBOX_REPOSITORY,
  AUDIT_LOG,
  ACTION_HISTORY_REPOSITORY,
  AUTOMATION_LOG_REPOSITORY,
  type AutomationSet,
  AutomationEngine,
  CHANGE_FEED,
  type ChangeFeed,
  type Clock,
  createCoreModule,
  CreateAction,
  CreateGroup,
  DEVICE_REPOSITORY,
  ENGINE_STATE_REPOSITORY,
  STAGE_REPOSITORY,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
  RecordReadings,
  ReplaceAutomations,
  SCHEDULER,
  type Scheduler,
  sensorTopics,
  USER_REPOSITORY,
} from '@hortus/core';
import { createMemoryStore, type MemoryStore } from '@hortus/adapter-memory';

class FakeClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(iso: string): void {
    this.current = new Date(iso);
  }
}

const byHand: Scheduler = {
  every: () => {
    throw new Error('tests drive ticks by hand');
  },
};

/** Counts the group reads a tick makes, to tell evaluated groups from skipped ones by the store's side too. */
class CountingGroups {
  reads = 0;
  constructor(private readonly inner: GroupRepository) {}
  wrap(): GroupRepository {
    return new Proxy(this.inner, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (property === 'list' || property === 'findByName') this.reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}

/** One server: its own container (engine, cursor, schedule) over a store servers may share. */
function server(
  store: MemoryStore,
  clock: FakeClock,
  options: { feed?: ChangeFeed; fullPassMs?: number; actions?: ActionRepository } = {},
) {
  const groups = new CountingGroups(store.groups);
  const container = new Container();
  container.load(
    createCoreModule(
      {
        timeZone: 'UTC',
        commitsCacheMs: 60_000,
        automation: { fullPassMs: options.fullPassMs ?? 3_600_000 },
      },
      clock,
    ),
    new ContainerModule(({ bind }) => {
      bind(READING_REPOSITORY).toConstantValue(store.readings);
      bind(ACTION_REPOSITORY).toConstantValue(options.actions ?? store.actions);
      bind(DEVICE_REPOSITORY).toConstantValue(store.devices);
      bind(NOTIFICATION_REPOSITORY).toConstantValue(store.notifications);
      bind(HISTORY_CHART_REPOSITORY).toConstantValue(store.historyCharts);
      bind(GROUP_REPOSITORY).toConstantValue(groups.wrap());
      bind(USER_REPOSITORY).toConstantValue(store.users);
      bind(ENGINE_STATE_REPOSITORY).toConstantValue(store.engineState);
      bind(AUTOMATION_LOG_REPOSITORY).toConstantValue(store.automationLog);
      bind(ACTION_HISTORY_REPOSITORY).toConstantValue(store.actionHistory);
      bind(STAGE_REPOSITORY).toConstantValue(store.stages);
      bind(ALERT_OUTBOX_REPOSITORY).toConstantValue(store.alertOutbox);
      bind(AUDIT_LOG).toConstantValue(store.auditLog);
      bind(CHANGE_FEED).toConstantValue(options.feed ?? store.changeFeed);
      bind(SCHEDULER).toConstantValue(byHand);
    }),
  );
  return {
    groups,
    engine: container.get(AutomationEngine),
    record: container.get(RecordReadings),
    createGroup: container.get(CreateGroup),
    createAction: container.get(CreateAction),
    replaceAutomations: container.get(ReplaceAutomations),
  };
}

const timeRule = (time: string, action = 'on'): AutomationSet[] =>
  [{ timeAutomations: [{ action, time, frequency: 'every day' }], sensorAutomations: [] }] as AutomationSet[];

const sensorRules: AutomationSet[] = [
  {
    timeAutomations: [],
    sensorAutomations: [
      { action: 'on', sensor: 'temperature', condition: 'above', value: '28' },
      { action: 'off', sensor: 'temperature', condition: 'below', value: '20' },
    ],
  },
] as AutomationSet[];

async function pump(store: MemoryStore, group: string): Promise<string | undefined> {
  return (await store.actions.find(group, 'pump'))?.value;
}

describe('automation engine driven by changes', () => {
  it('when a group has no change and nothing due, then a tick neither evaluates nor reads it', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const app = server(store, clock);
    for (const name of ['gh-1', 'gh-2', 'gh-3']) await app.createGroup.execute({ name });

    const first = await app.engine.tick();
    clock.set('2026-06-10T12:00:10Z');
    const readsBefore = app.groups.reads;
    const idle = await app.engine.tick();

    expect(first.evaluated).to.deep.equal(['gh-1', 'gh-2', 'gh-3']);
    expect(idle.evaluated).to.deep.equal([]);
    expect(app.groups.reads - readsBefore).to.equal(0);
  });

  it('when one group receives a reading, then the next tick evaluates that group only, and the one after none', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const app = server(store, clock);
    for (const name of ['gh-1', 'gh-2', 'gh-3']) await app.createGroup.execute({ name });
    await app.engine.tick();

    await app.record.execute([{ group: 'gh-2', topic: sensorTopics.humidity, value: 50 }]);
    clock.set('2026-06-10T12:00:10Z');
    const changed = await app.engine.tick();
    clock.set('2026-06-10T12:00:20Z');
    const after = await app.engine.tick();

    expect(changed.evaluated).to.deep.equal(['gh-2']);
    expect(after.evaluated).to.deep.equal([]);
  });

  it('when a time slot falls due, then its group is evaluated at that tick and not before, and the rule fires', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T06:00:00Z'));
    const app = server(store, clock);
    await app.createGroup.execute({ name: 'gh' });
    await app.createGroup.execute({ name: 'other' });
    // 06:00 "off" is the latest slot at the first tick: the pump stays off, so the engine writes nothing.
    const rules = [...timeRule('06:00', 'off'), ...timeRule('06:30', 'on')];
    await app.createAction.execute({ group: 'gh', object: 'pump', value: 'off', automations: rules });
    await app.engine.tick();

    clock.set('2026-06-10T06:29:59Z');
    const before = await app.engine.tick();
    clock.set('2026-06-10T06:30:00Z');
    const due = await app.engine.tick();

    expect(before.evaluated).to.deep.equal([]);
    expect(due.evaluated).to.include('gh').and.not.include('other');
    expect(due.switched.map((event) => event.value)).to.deep.equal(['on']);
    expect(await pump(store, 'gh')).to.equal('on');
  });

  it('when a group goes quiet, then it is evaluated at its no-data deadline, without a change, and the alert opens', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const app = server(store, clock);
    await app.createGroup.execute({ name: 'gh' });
    await app.record.execute([
      { group: 'gh', topic: sensorTopics.humidity, value: 50, time: '2026-06-10T12:00:00Z' },
    ]);
    await app.engine.tick();

    clock.set('2026-06-10T12:29:59Z');
    const early = await app.engine.tick();
    clock.set('2026-06-10T12:30:01Z');
    const deadline = await app.engine.tick();

    expect(early.evaluated).to.deep.equal([]);
    expect(deadline.evaluated).to.deep.equal(['gh']);
    expect(deadline.alerts.map((notification) => notification.message)).to.deep.equal([
      'No data received from group gh for 30 minutes',
    ]);
  });

  it('when a sensor rule waits for the switch interval, then the group is evaluated again when it ends, with no new reading', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const app = server(store, clock);
    await app.createGroup.execute({ name: 'gh' });
    await app.createAction.execute({ group: 'gh', object: 'pump', value: 'off', automations: sensorRules });
    await app.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 29 }]);
    await app.engine.tick();
    clock.set('2026-06-10T12:00:30Z');
    await app.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 19 }]);
    const heldBack = await app.engine.tick();

    clock.set('2026-06-10T12:00:50Z');
    const waiting = await app.engine.tick();
    clock.set('2026-06-10T12:01:00Z');
    const intervalOver = await app.engine.tick();

    expect(heldBack.switched).to.deep.equal([]);
    expect(waiting.evaluated).to.deep.equal([]);
    expect(intervalOver.switched.map((event) => event.value)).to.deep.equal(['off']);
  });

  it('when another server on the same store changes a group, then this server evaluates it at its next tick, and the switch happens once', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const serverA = server(store, clock);
    const serverB = server(store, clock);
    await serverA.createGroup.execute({ name: 'gh' });
    await serverA.createAction.execute({ group: 'gh', object: 'pump', value: 'off', automations: [] });
    await serverA.engine.tick();
    await serverB.engine.tick();

    await serverB.replaceAutomations.execute({ group: 'gh', object: 'pump', automations: sensorRules });
    await serverB.record.execute([{ group: 'gh', topic: sensorTopics.temperature, value: 29 }]);
    clock.set('2026-06-10T12:00:10Z');
    const onA = await serverA.engine.tick();
    const onB = await serverB.engine.tick();

    expect(onA.evaluated).to.deep.equal(['gh']);
    expect(onB.evaluated).to.deep.equal(['gh']);
    expect([...onA.switched, ...onB.switched].map((event) => event.value)).to.deep.equal(['on']);
    expect(await pump(store, 'gh')).to.equal('on');
  });

  it('when the full-pass interval has passed, then every group is evaluated once more, changed or not', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    const app = server(store, clock, { fullPassMs: 60_000 });
    for (const name of ['gh-1', 'gh-2']) await app.createGroup.execute({ name });
    await app.engine.tick();

    clock.set('2026-06-10T12:00:59Z');
    const within = await app.engine.tick();
    clock.set('2026-06-10T12:01:00Z');
    const full = await app.engine.tick();

    expect(within.evaluated).to.deep.equal([]);
    expect(full.evaluated).to.deep.equal(['gh-1', 'gh-2']);
  });

  it('when the change feed fails, then the tick rejects, and the changes are not lost: the next tick evaluates them', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    let down = false;
    const feed: ChangeFeed = {
      changesSince: (cursor) =>
        down ? Promise.reject(new Error('store unavailable')) : store.changeFeed.changesSince(cursor),
    };
    const app = server(store, clock, { feed });
    for (const name of ['gh-1', 'gh-2']) await app.createGroup.execute({ name });
    await app.engine.tick();

    await app.record.execute([{ group: 'gh-1', topic: sensorTopics.humidity, value: 50 }]);
    down = true;
    await expect(app.engine.tick()).to.be.rejectedWith('store unavailable');
    down = false;
    const recovered = await app.engine.tick();

    expect(recovered.evaluated).to.deep.equal(['gh-1']);
  });

  it('when a group fails to evaluate, then it is reported and evaluated again at the next tick, though nothing changed', async () => {
    const store = createMemoryStore();
    const clock = new FakeClock(new Date('2026-06-10T12:00:00Z'));
    let failing = false;
    const actions = new Proxy(store.actions, {
      get: (target, property, receiver) =>
        property === 'listByGroup' && failing
          ? () => Promise.reject(new Error('broken record'))
          : (Reflect.get(target, property, receiver) as unknown),
    });
    const app = server(store, clock, { actions });
    for (const name of ['gh-1', 'gh-2']) await app.createGroup.execute({ name });
    await app.engine.tick();

    await app.record.execute([{ group: 'gh-1', topic: sensorTopics.humidity, value: 50 }]);
    failing = true;
    clock.set('2026-06-10T12:00:10Z');
    const failed = await app.engine.tick();
    failing = false;
    clock.set('2026-06-10T12:00:20Z');
    const retried = await app.engine.tick();
    clock.set('2026-06-10T12:00:30Z');
    const after = await app.engine.tick();

    expect(failed.failures.map((failure) => failure.group)).to.deep.equal(['gh-1']);
    expect(retried.evaluated).to.deep.equal(['gh-1']);
    expect(retried.failures).to.deep.equal([]);
    expect(after.evaluated).to.deep.equal([]);
  });
});
