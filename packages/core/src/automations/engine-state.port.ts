import { type SensorAutomation } from '../actions/action.js';
/** Small JSON documents the engine keeps between ticks: slot claims, rule sides, open alerts. */
export type EngineValue = Readonly<Record<string, string | number | boolean | null>>;

export interface EngineState {
  readonly version: number;
  readonly value: EngineValue;
  readonly updatedAt: Date;
}

/**
 * Compare-and-set storage shared by every engine instance on one store. It is what makes a time slot fire
 * exactly once across restarts and across several servers: only one caller's write can win a version.
 */
export interface EngineStateRepository {
  get(key: string): Promise<EngineState | undefined>;
  /**
   * Stores `value` as version `expectedVersion + 1` when the stored version is `expectedVersion` (0 = absent).
   * Answers false, changing nothing, when another writer got there first.
   */
  compareAndSet(key: string, expectedVersion: number, value: EngineValue, at: Date): Promise<boolean>;
  /** Forgets entries last written before `before` (old slot claims); answers how many went. */
  purgeBefore(before: Date): Promise<number>;
  /** Every key with its current state, ordered by key (`hortus store copy`). */
  list(): Promise<{ readonly key: string; readonly state: EngineState }[]>;
  /** Stores a state copied from another store as it is (its version too), replacing the key's. */
  restore(key: string, state: EngineState): Promise<void>;
}

/**
 * Builds a state key from its parts. JSON keeps parts apart whatever characters names hold, and has no
 * NUL byte, which some stores (FerretDB on PostgreSQL's JSONB) cannot keep.
 */
export function engineStateKey(...parts: readonly string[]): string {
  return JSON.stringify(parts);
}

/** Where the engines keep when the rules were last evaluated (`{at}`, milliseconds since the epoch). */
export const lastEngineRunKey = engineStateKey('engine', 'lastRun');

/** Where the side a sensor rule last saw is kept: the engine reads and writes it, safe mode re-arms it. */
export function sensorRuleStateKey(
  action: { readonly group: string; readonly object: string },
  rule: SensorAutomation,
): string {
  return engineStateKey(
    'rule',
    action.group,
    action.object,
    rule.sensor,
    rule.condition,
    rule.value,
    rule.action,
  );
}

export const ENGINE_STATE_REPOSITORY = Symbol.for('hortus.EngineStateRepository');
