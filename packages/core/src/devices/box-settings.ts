import { ConfigError, type Env, envReader } from '../shared/env.js';
import { DEFAULT_TIME_ZONE, isValidTimeZone } from '../shared/time-zone.js';

/** How Hortus treats boxes of the HTTP generation (firmware 1.0.4). */
export interface BoxSettings {
  /** The zone whose wall clock the boxes stamp with a `Z` (BOX_TIME_ZONE); a group's `boxTimeZone` wins. */
  readonly timeZone: string;
  /** A box that onboarded and sent nothing for this long shows as silent (DEVICE_SILENT_AFTER_MS). */
  readonly silentAfterMs: number;
  /** Unregistered boxes kept in the pending list (MAX_PENDING_DEVICES). */
  readonly maxPending: number;
  /** Onboarding requests of unknown ids answered per address and minute (UNKNOWN_DEVICE_PER_MINUTE). */
  readonly unknownPerMinute: number;
  /** A device's last-seen time is written at most this often, not on each of its 13 requests a round. */
  readonly lastSeenWriteMs: number;
  /**
   * Registered boxes that were reporting before the server started and have sent nothing since, this long
   * after the start, are named in one alert per group (BOX_START_GRACE_MS); 0 turns the alert off.
   */
  readonly startGraceMs: number;
}

export const BOX_SETTINGS = Symbol.for('hortus.BoxSettings');

export const defaultBoxSettings: BoxSettings = {
  timeZone: DEFAULT_TIME_ZONE,
  // A round is 20 s: three missed rounds.
  silentAfterMs: 60_000,
  maxPending: 1000,
  // A box tries once a second at most, 50 times: two boxes booting behind one address stay under it.
  unknownPerMinute: 120,
  lastSeenWriteMs: 15_000,
  // A box that boots retries onboarding 50 times over about a minute, then reports every 20 s.
  startGraceMs: 10 * 60_000,
};

/** Below this a box has no time to report after the server starts, and every box would be named. */
const MIN_START_GRACE_MS = 60_000;

/** Derives a device's key from the server's secret, so a box that onboards again gets the same key back. */
export interface BoxKeyDeriver {
  derive(secret: string, material: string): string;
}

export const BOX_KEY_DERIVER = Symbol.for('hortus.BoxKeyDeriver');

export function boxSettingsFromEnv(env: Env): BoxSettings {
  const problems: string[] = [];
  const { read, integer } = envReader(
    env,
    {
      BOX_TIME_ZONE: defaultBoxSettings.timeZone,
      DEVICE_SILENT_AFTER_MS: String(defaultBoxSettings.silentAfterMs),
      MAX_PENDING_DEVICES: String(defaultBoxSettings.maxPending),
      UNKNOWN_DEVICE_PER_MINUTE: String(defaultBoxSettings.unknownPerMinute),
      BOX_START_GRACE_MS: String(defaultBoxSettings.startGraceMs),
    },
    problems,
  );
  const timeZone = read('BOX_TIME_ZONE');
  if (!isValidTimeZone(timeZone)) problems.push(`BOX_TIME_ZONE must be an IANA time zone, got "${timeZone}"`);
  const settings: BoxSettings = {
    timeZone,
    silentAfterMs: integer('DEVICE_SILENT_AFTER_MS', 1000, 30 * 86_400_000),
    maxPending: integer('MAX_PENDING_DEVICES', 0, 1_000_000),
    unknownPerMinute: integer('UNKNOWN_DEVICE_PER_MINUTE', 1, 100_000),
    lastSeenWriteMs: defaultBoxSettings.lastSeenWriteMs,
    startGraceMs: integer('BOX_START_GRACE_MS', 0, 86_400_000),
  };
  if (settings.startGraceMs > 0 && settings.startGraceMs < MIN_START_GRACE_MS)
    problems.push(
      `BOX_START_GRACE_MS must be 0 (off) or at least ${MIN_START_GRACE_MS}, got ${settings.startGraceMs}`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}
