import { type ActionHistoryEntry, type NewActionHistoryEntry } from '../action-history/action-history.js';
import { type ActionHistoryRepository } from '../action-history/action-history.port.js';
import { type Action } from '../actions/action.js';
import { type ActionRepository } from '../actions/action.port.js';
import { type Group } from '../groups/group.js';
import { type GroupRepository } from '../groups/group.port.js';
import { type Notification, type NewNotification } from '../notifications/notification.js';
import { type NotificationRepository } from '../notifications/notification.port.js';
import { type Reading } from '../readings/reading.js';
import { type ReadingRange, type ReadingRepository } from '../readings/reading.port.js';
import { type Clock } from '../shared/clock.port.js';
import { type AutomationEvent, type NewAutomationEvent } from './automation-event.js';
import { type AutomationLogRepository } from './automation-log.port.js';
import { type EngineState, type EngineStateRepository, type EngineValue } from './engine-state.port.js';

/**
 * The stores a simulated engine (preview, backtest) runs on: the live engine's classes are built over
 * these instead of the real store, so they run the same code and write nothing real. Each implements
 * what the engine calls; any other method throws, so a new write the engine starts making shows up as
 * an error in the simulation tests instead of as a silent write.
 */
function sandbox<T extends object>(what: string, methods: Partial<T>): T {
  const missing = new Proxy(
    {},
    {
      get(_target, property) {
        if (typeof property === 'symbol' || property === 'then') return undefined;
        return () => {
          throw new Error(`${what}.${property} is not available in a simulation`);
        };
      },
    },
  );
  return Object.assign(Object.create(missing) as T, methods);
}

/** The simulated time, set by the loop that drives the engine. */
export class SimulatedClock implements Clock {
  constructor(public at: number) {}
  now(): Date {
    return new Date(this.at);
  }
}

/**
 * Engine state written to memory only; reads fall through to `base` for keys not written yet (the
 * preview starts from the live engine's state; the backtest from none).
 */
export function overlayEngineState(base: EngineStateRepository | undefined): {
  readonly repository: EngineStateRepository;
  /** The value written in the simulation under `key`, read at once (the backtest's look-ahead). */
  readonly written: (key: string) => EngineValue | undefined;
} {
  const own = new Map<string, EngineState>();
  const get = async (key: string): Promise<EngineState | undefined> =>
    own.has(key) ? own.get(key) : base?.get(key);
  const repository = sandbox<EngineStateRepository>('engineState', {
    get,
    async compareAndSet(key: string, expectedVersion: number, value: EngineValue, at: Date) {
      const current = own.has(key) ? own.get(key) : await base?.get(key);
      if ((current?.version ?? 0) !== expectedVersion) return false;
      own.set(key, { version: expectedVersion + 1, value, updatedAt: at });
      return true;
    },
    purgeBefore: async () => 0,
  });
  return { repository, written: (key) => own.get(key)?.value };
}

/** One group and its actions, copied: the engine switches the copies. */
export function simulatedGroups(group: Group): GroupRepository {
  return sandbox<GroupRepository>('groups', {
    list: async () => [group],
    findByName: async (name: string) => (name === group.name ? group : undefined),
  });
}

export function simulatedActions(actions: readonly Action[]): {
  readonly repository: ActionRepository;
  readonly values: () => Map<string, string>;
} {
  const byObject = new Map(actions.map((action) => [action.object, action]));
  const ordered = () => [...byObject.values()];
  return {
    repository: sandbox<ActionRepository>('actions', {
      listByGroup: async () => ordered(),
      find: async (_group: string, object: string) => byObject.get(object),
      async setValue(_group: string, object: string, value: string) {
        const found = byObject.get(object);
        if (found === undefined) return undefined;
        const updated = { ...found, value };
        byObject.set(object, updated);
        return updated;
      },
    }),
    values: () => new Map(ordered().map((action) => [action.object, action.value])),
  };
}

/**
 * The action history as the minimum on/off-time reads it: the simulated switches, newest first, before
 * `base`'s entries (the preview's real history; none in a backtest).
 */
export function overlayHistory(base: ActionHistoryRepository | undefined): ActionHistoryRepository {
  const own = new Map<string, ActionHistoryEntry[]>();
  let next = 0;
  return sandbox<ActionHistoryRepository>('actionHistory', {
    async record(entry: NewActionHistoryEntry) {
      const stored = { ...entry, id: `simulated-${(next += 1)}` };
      const list = own.get(entry.object) ?? [];
      // Only the newest is read (the last switch); a few are kept for a clear failure if that changes.
      list.unshift(stored);
      if (list.length > 8) list.length = 8;
      own.set(entry.object, list);
      return stored;
    },
    async list(group: string, object: string | undefined, limit: number) {
      const mine = object === undefined ? [] : (own.get(object) ?? []);
      if (mine.length >= limit || base === undefined) return mine.slice(0, limit);
      return [...mine, ...(await base.list(group, object, limit - mine.length))];
    },
  });
}

/** The automation log of the simulation: what the rules would have switched, in order. */
export function simulatedLog(): {
  readonly repository: AutomationLogRepository;
  readonly events: AutomationEvent[];
} {
  const events: AutomationEvent[] = [];
  return {
    events,
    repository: sandbox<AutomationLogRepository>('automationLog', {
      async record(event: NewAutomationEvent) {
        const stored = { ...event, id: `simulated-${events.length + 1}` };
        events.push(stored);
        return stored;
      },
    }),
  };
}

/** Notifications (safe mode's) are kept in memory only. */
export function simulatedNotifications(): NotificationRepository {
  let next = 0;
  return sandbox<NotificationRepository>('notifications', {
    create: async (notification: NewNotification): Promise<Notification> => ({
      ...notification,
      id: `simulated-${(next += 1)}`,
      ignore: 'false',
    }),
  });
}

/** How many of each topic's newest readings are kept: safe mode measures the usual interval on 11. */
const KEPT_PER_TOPIC = 16;

/**
 * The readings as the engine reads them at the simulated time: the replay pushes each reading once its
 * time has come, and `latest`/`newestFirst` answer from the few newest of each topic.
 */
export class ReplayReadings {
  private readonly newest = new Map<string, Reading[]>();
  /** The topics of the readings pushed since `takeArrived` was last called. */
  private arrived = new Set<string>();
  readonly repository: ReadingRepository;

  constructor() {
    this.repository = sandbox<ReadingRepository>('readings', {
      latest: async (_group: string, topic: string) => {
        const list = this.newest.get(topic);
        return list === undefined ? undefined : list[list.length - 1];
      },
      newestFirst: async (range: ReadingRange, limit: number) =>
        (this.newest.get(range.topic) ?? []).slice(-limit).reverse(),
    });
  }

  /** The topics that received readings since the last call. */
  takeArrived(): ReadonlySet<string> {
    const arrived = this.arrived;
    this.arrived = new Set();
    return arrived;
  }

  /** The newest reading of the topic pushed so far. */
  newestOf(topic: string): Reading | undefined {
    const list = this.newest.get(topic);
    return list === undefined ? undefined : list[list.length - 1];
  }

  /** A reading whose time has come (in time order). */
  push(reading: Reading): void {
    this.arrived.add(reading.topic);
    let list = this.newest.get(reading.topic);
    if (list === undefined) this.newest.set(reading.topic, (list = []));
    list.push(reading);
    if (list.length > 2 * KEPT_PER_TOPIC) list.splice(0, list.length - KEPT_PER_TOPIC);
  }
}
