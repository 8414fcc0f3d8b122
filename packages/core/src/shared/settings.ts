import { type RetentionSettings } from '../readings/apply-retention.js';
import { type AutomationSettings } from '../automations/automation-settings.js';
import { MAX_CHARTS_PER_USER } from '../history-charts/history-chart.js';

/** Policy values the use cases need; each transport's composition root binds them from its configuration. */
export interface CoreSettings {
  /** IANA time zone in which "today" is counted (the /tem route). */
  readonly timeZone: string;
  /** How long a fetched commit list is served before the code host is asked again. */
  readonly commitsCacheMs: number;
  /** Overrides of the automation engine's defaults. */
  readonly automation?: Partial<AutomationSettings>;
  /** Overrides of the limits on stored data. */
  readonly limits?: Partial<CoreLimits>;
  /** How long readings and their rollups are kept (RETENTION_DAYS, ROLLUP_RETENTION_DAYS); forever by default. */
  readonly retention?: Partial<RetentionSettings>;
}

export const CORE_SETTINGS = Symbol.for('hortus.CoreSettings');

/**
 * Bounds on what clients may store, so one hostile or broken client cannot take a group (or every group)
 * over. A breach is rejected item by item (readings) or with a QuotaExceededError (everything else).
 */
export interface CoreLimits {
  /** A reading stamped further than this ahead of the server's clock is rejected. */
  readonly maxClockSkewMs: number;
  /** Distinct topics a group may hold; a reading of a new topic beyond this is rejected. */
  readonly maxTopicsPerGroup: number;
  readonly maxDevicesPerGroup: number;
  readonly maxChartsPerUser: number;
  /** Open notifications a group may hold; beyond it new ones are refused (alerts are skipped, logged). */
  readonly maxOpenNotificationsPerGroup: number;
  /** An alert of one kind on one topic opens at most once in this interval, so a flapping value cannot flood. */
  readonly alertReopenMs: number;
}

export const CORE_LIMITS = Symbol.for('hortus.CoreLimits');

export const defaultCoreLimits: CoreLimits = {
  maxClockSkewMs: 5 * 60_000,
  maxTopicsPerGroup: 256,
  maxDevicesPerGroup: 1000,
  maxChartsPerUser: MAX_CHARTS_PER_USER,
  maxOpenNotificationsPerGroup: 1000,
  alertReopenMs: 15 * 60_000,
};

/** The variable that sets each limit, with its default and bounds. */
export const coreLimitVariables = {
  MAX_CLOCK_SKEW_MS: { limit: 'maxClockSkewMs', min: 0, max: 7 * 86_400_000 },
  MAX_TOPICS_PER_GROUP: { limit: 'maxTopicsPerGroup', min: 1, max: 100_000 },
  MAX_DEVICES_PER_GROUP: { limit: 'maxDevicesPerGroup', min: 1, max: 1_000_000 },
  MAX_CHARTS_PER_USER: { limit: 'maxChartsPerUser', min: 1, max: 10_000 },
  MAX_OPEN_NOTIFICATIONS_PER_GROUP: { limit: 'maxOpenNotificationsPerGroup', min: 1, max: 1_000_000 },
  ALERT_REOPEN_MS: { limit: 'alertReopenMs', min: 0, max: 7 * 86_400_000 },
} as const satisfies Record<string, { limit: keyof CoreLimits; min: number; max: number }>;
type CoreLimitVariable = keyof typeof coreLimitVariables;

export const defaultCoreSettings: CoreSettings = { timeZone: 'UTC', commitsCacheMs: 60_000 };

/** Environment variables as a process sees them; every package's settings parser reads this shape. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A configuration that cannot be used, with every problem found, so one start reports all of them. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface EnvReader<N extends string> {
  /** The trimmed value, or the default when unset or empty. */
  read(name: N): string;
  /** The trimmed value, or undefined when unset or empty. */
  optional(name: string): string | undefined;
  /** A whole number within bounds; a bad value is reported and the default returned. */
  integer(name: N, min: number, max: number): number;
  /** `on` or `off` in any case; a bad value is reported and the default taken. */
  onOff(name: N): boolean;
}

/**
 * Reads variables with defaults, pushing each unusable value onto `problems` instead of stopping at the
 * first, so a parser can report every mistake of a configuration at once.
 */
export function envReader<N extends string>(
  env: Env,
  defaults: Readonly<Record<N, string>>,
  problems: string[],
): EnvReader<N> {
  const optional = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const read = (name: N): string => optional(name) ?? defaults[name];
  return {
    read,
    optional,
    integer: (name, min, max) => {
      const text = read(name);
      const value = /^\d+$/u.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        problems.push(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
        return Number(defaults[name]);
      }
      return value;
    },
    onOff: (name) => {
      const text = read(name).toLowerCase();
      if (text !== 'on' && text !== 'off') {
        problems.push(`${name} must be on or off, got "${read(name)}"`);
        return defaults[name].toLowerCase() === 'on';
      }
      return text === 'on';
    },
  };
}

/** Runs one package's settings parser, moving its ConfigError's problems onto the caller's list. */
export function collectProblems<T>(problems: string[], parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems);
    else problems.push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

/** Reads the limits on stored data (MAX_CLOCK_SKEW_MS, MAX_TOPICS_PER_GROUP, ...); throws a ConfigError. */
export function coreLimitsFromEnv(env: Env): CoreLimits {
  const problems: string[] = [];
  const defaults = Object.fromEntries(
    Object.entries(coreLimitVariables).map(([name, { limit }]) => [name, String(defaultCoreLimits[limit])]),
  ) as Record<CoreLimitVariable, string>;
  const { integer } = envReader(env, defaults, problems);
  const limits: Record<string, number> = {};
  for (const [name, { limit, min, max }] of Object.entries(coreLimitVariables)) {
    limits[limit] = integer(name as CoreLimitVariable, min, max);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...defaultCoreLimits, ...limits };
}
