import { type Repositories, StoreUnavailableError } from '@hortus/core';
import { at, expect } from './store.js';

/** A store that answers, and the means to make it stop answering. */
export interface StoppableStore {
  readonly repositories: Repositories;
  /** Makes the store stop answering: a closed handle, a stopped server, or a server that keeps silent. */
  stop(): Promise<void>;
  /** Releases whatever the suite opened; runs after the suite, also when stop ran. */
  dispose(): Promise<void>;
}

export interface StoreDownOptions {
  /** How long a call may take to reject once the store is down: the adapter's own deadline and a margin. */
  readonly withinMs: number;
}

const GROUP = 'down-greenhouse';
const TOPIC = 'esp/air/temperature';
// A valid ObjectId text: a store that parses ids must still ask its database about it.
const USER_ID = '0123456789abcdef01234567';

type Call = (repositories: Repositories) => Promise<unknown>;

/**
 * Each port's reads and writes, with valid arguments, so that only the store's answer can decide them.
 * Not every method: the ones a request or a background job makes first, and each kind of write.
 */
const callsByPort: { readonly [K in keyof Repositories]: Readonly<Record<string, Call>> } = {
  readings: {
    add: (r) => r.readings.add([{ group: GROUP, topic: TOPIC, value: 21.5, time: at(0) }]),
    latestOfEveryTopic: (r) => r.readings.latestOfEveryTopic(GROUP),
    newestFirst: (r) => r.readings.newestFirst({ group: GROUP, topic: TOPIC }, 10),
    revision: (r) => r.readings.revision(GROUP),
  },
  actions: {
    create: (r) => r.actions.create({ group: GROUP, object: 'pump_1', value: 'off', automations: [] }),
    listByGroup: (r) => r.actions.listByGroup(GROUP),
    setValue: (r) => r.actions.setValue(GROUP, 'pump_1', 'on'),
  },
  devices: {
    list: (r) => r.devices.list(),
    find: (r) => r.devices.find('24:6F:28:AA:00:01', '246f28aa0001'),
    create: (r) => r.devices.create({ deviceId: '24:6F:28:AA:00:01', group: GROUP, type: 'box' }),
    listPending: (r) => r.devices.listPending(),
  },
  auditLog: {
    list: (r) => r.auditLog.list({ limit: 10 }),
    record: (r) =>
      r.auditLog.record({ at: at(0), actor: { kind: 'cli' }, action: 'group.settings', target: GROUP }),
  },
  notifications: {
    listOpen: (r) => r.notifications.listOpen(GROUP),
    create: (r) =>
      r.notifications.create({ group: GROUP, message: 'too warm', time: at(0), topic: TOPIC, value: 31 }),
    find: (r) => r.notifications.find(GROUP, '0123456789abcdef01234567'),
    acknowledge: (r) =>
      r.notifications.acknowledge(GROUP, '0123456789abcdef01234567', { at: at(0), by: { kind: 'cli' } }),
  },
  historyCharts: {
    findByUser: (r) => r.historyCharts.findByUser(USER_ID),
    userIds: (r) => r.historyCharts.userIds(),
  },
  groups: {
    findByName: (r) => r.groups.findByName(GROUP),
    list: (r) => r.groups.list(),
    create: (r) => r.groups.create({ name: GROUP, package: 'small', employee: [], settings: [] }),
    replaceSettings: (r) => r.groups.replaceSettings(GROUP, [{ tempMax: 30 }]),
  },
  users: {
    findById: (r) => r.users.findById(USER_ID),
    findByEmail: (r) => r.users.findByEmail('grower@example.org'),
    list: (r) => r.users.list(),
    endSessions: (r) => r.users.endSessions(USER_ID),
  },
  engineState: {
    get: (r) => r.engineState.get('slot:down'),
    compareAndSet: (r) => r.engineState.compareAndSet('slot:down', 0, { fired: true }, at(0)),
  },
  automationLog: {
    listByGroup: (r) => r.automationLog.listByGroup(GROUP, 10),
  },
  actionHistory: {
    list: (r) => r.actionHistory.list(GROUP, undefined, 10),
    groups: (r) => r.actionHistory.groups(),
  },
  accessKeys: {
    findByHash: (r) => r.accessKeys.findByHash('0'.repeat(64)),
    hasAny: (r) => r.accessKeys.hasAny(),
    list: (r) => r.accessKeys.list(),
  },
  serverSecrets: {
    list: (r) => r.serverSecrets.list(),
    findOrCreate: (r) => r.serverSecrets.findOrCreate('down-test', 'candidate'),
  },
  alertOutbox: {
    getSettings: (r) => r.alertOutbox.getSettings(GROUP),
    claimDue: (r) => r.alertOutbox.claimDue(at(0), 30_000, 10),
    countPending: (r) => r.alertOutbox.countPending(at(0)),
  },
  firmware: {
    list: (r) => r.firmware.list(),
    read: (r) => r.firmware.read('0'.repeat(64)),
  },
  stages: {
    get: (r) => r.stages.get(GROUP),
    list: (r) => r.stages.list(),
    compareAndSet: (r) =>
      r.stages.compareAndSet(
        {
          group: GROUP,
          recipe: { name: 'r', stages: [{ name: 's', rules: [] }] },
          stage: 's',
          startedAt: at(0),
          applied: false,
        },
        0,
      ),
  },
  changeFeed: {
    changesSince: (r) => r.changeFeed.changesSince(undefined),
  },
};

/** How a call ended, and after how long. */
async function settle(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await call;
    return { error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

/**
 * When the store stops answering, every port's calls reject with the core's StoreUnavailableError (code
 * UNAVAILABLE: the 503 of the HTTP API, exit 5 of the CLI) within the adapter's deadline: none hangs, none
 * answers as if the data were empty, none fails with a driver's own error.
 */
export function storeDownContract(
  name: string,
  openStore: () => Promise<StoppableStore>,
  options: StoreDownOptions,
): void {
  describe(`${name}: when the store stops answering`, function () {
    // One store for the suite, stopped once; every port's calls then run together on the dead store, so
    // the suite takes one deadline however many ports there are.
    let store: StoppableStore | undefined;
    const outcomes = new Map<string, { method: string; error: unknown; ms: number }[]>();
    before(async function () {
      this.timeout(options.withinMs * 2 + 30_000);
      store = await openStore();
      await store.stop();
      const { repositories } = store;
      await Promise.all(
        Object.entries(callsByPort).map(async ([port, calls]) => {
          const settled = await Promise.all(
            Object.entries(calls).map(async ([method, call]) => ({
              method,
              ...(await settle(call(repositories))),
            })),
          );
          outcomes.set(port, settled);
        }),
      );
    });
    after(async function () {
      this.timeout(30_000);
      const opened = store;
      store = undefined;
      await opened?.dispose();
    });

    for (const port of Object.keys(callsByPort)) {
      it(`when the ${port} port is called, then each call rejects with StoreUnavailableError within ${options.withinMs} ms`, () => {
        for (const { method, error, ms } of outcomes.get(port) ?? []) {
          expect(error, `${port}.${method} answered instead of rejecting`).to.be.instanceOf(
            StoreUnavailableError,
          );
          expect(error).to.have.property('code', 'UNAVAILABLE');
          expect(ms, `${port}.${method} took ${Math.round(ms)} ms`).to.be.below(options.withinMs);
        }
        expect(outcomes.get(port), port).to.have.length.greaterThan(0);
      });
    }
  });
}
