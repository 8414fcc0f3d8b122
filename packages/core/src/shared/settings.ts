import { type RetentionSettings } from '../readings/apply-retention.js';
import { type AutomationSettings } from '../automations/automation-settings.js';
import { MAX_CHARTS_PER_USER } from '../history-charts/history-chart.js';
import { ConfigError, type Env, envReader } from './env.js';
import { DEFAULT_TIME_ZONE } from './time-zone.js';

/** Policy values the use cases need; each transport's composition root binds them from its configuration. */
export interface CoreSettings {
  /**
   * IANA time zone (TIME_ZONE) of time rules, "today" (the /tem route, DLI) and the times in alert messages,
   * for groups without a `timeZone` setting.
   */
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
  /** A critical alert not yet acknowledged is sent again this often through its channels; 0: never. */
  readonly alertRepeatMs: number;
}

export const CORE_LIMITS = Symbol.for('hortus.CoreLimits');

export const defaultCoreLimits: CoreLimits = {
  maxClockSkewMs: 5 * 60_000,
  maxTopicsPerGroup: 256,
  maxDevicesPerGroup: 1000,
  maxChartsPerUser: MAX_CHARTS_PER_USER,
  maxOpenNotificationsPerGroup: 1000,
  alertReopenMs: 15 * 60_000,
  alertRepeatMs: 30 * 60_000,
};

/** The variable that sets each limit, with its default and bounds. */
/** The limits in force: the defaults with what the settings change. */
export function coreLimitsOf(settings: CoreSettings): CoreLimits {
  return { ...defaultCoreLimits, ...settings.limits };
}

export const coreLimitVariables = {
  MAX_CLOCK_SKEW_MS: { limit: 'maxClockSkewMs', min: 0, max: 7 * 86_400_000 },
  MAX_TOPICS_PER_GROUP: { limit: 'maxTopicsPerGroup', min: 1, max: 100_000 },
  MAX_DEVICES_PER_GROUP: { limit: 'maxDevicesPerGroup', min: 1, max: 1_000_000 },
  MAX_CHARTS_PER_USER: { limit: 'maxChartsPerUser', min: 1, max: 10_000 },
  MAX_OPEN_NOTIFICATIONS_PER_GROUP: { limit: 'maxOpenNotificationsPerGroup', min: 1, max: 1_000_000 },
  ALERT_REOPEN_MS: { limit: 'alertReopenMs', min: 0, max: 7 * 86_400_000 },
  ALERT_REPEAT_MS: { limit: 'alertRepeatMs', min: 0, max: 7 * 86_400_000 },
} as const satisfies Record<string, { limit: keyof CoreLimits; min: number; max: number }>;
type CoreLimitVariable = keyof typeof coreLimitVariables;

export const defaultCoreSettings: CoreSettings = { timeZone: DEFAULT_TIME_ZONE, commitsCacheMs: 60_000 };

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
