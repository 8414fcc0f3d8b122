import { groupSettingKeys } from '../groups/group-setting-keys.js';
import { readNumberSetting, readSetting, withSetting } from '../groups/group-settings.js';
import { readSeverity, type Severity } from '../notifications/notification.js';
import { sensorTopics } from '../readings/reading.js';
import { isPlainObject } from '../shared/validation.js';

/**
 * The group setting that holds a range per topic, beside the original's `tempMin`/`tempMax` and
 * `moistureMin`/`moistureMax`: `{"alertRanges": {"esp/air/humidity": {"min": 40, "max": 80,
 * "hysteresis": 2, "delayMs": 120000}}}`.
 */
export const ALERT_RANGES_KEY = groupSettingKeys.alertRanges;
/** Ranges one group may hold: each is checked on every evaluation of the group. */
export const MAX_TOPIC_RANGES = 100;
export const MAX_ALERT_DELAY_MS = 24 * 60 * 60_000;
/**
 * Bounds of a no-data deadline (a topic's or a box's). A box's last request is written at most every 15 s,
 * so a deadline under a minute could fire on a box that is fine.
 */
export const MIN_NO_DATA_MS = 60_000;
export const MAX_NO_DATA_MS = 7 * 24 * 60 * 60_000;

export interface TopicRange {
  readonly min?: number;
  readonly max?: number;
  /** How far back inside a bound the value must come for its alert to end; absent: the engine's dead band. */
  readonly hysteresis?: number;
  /** How long the value must stay outside before the alert opens; absent: at once. */
  readonly delayMs?: number;
  /** A topic that has reported and then sent nothing for this long raises a "no data" alert. */
  readonly noDataMs?: number;
  /** How loud its alerts are; absent: `warning`. */
  readonly severity?: Severity;
}

const finite = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/**
 * The ranges the settings hold. Clients may write the settings as any JSON, so what is not a range (a
 * non-number, a negative hysteresis or delay) is skipped rather than trusted.
 */
export function readTopicRanges(settings: unknown): Map<string, TopicRange> {
  const raw = readSetting(settings, ALERT_RANGES_KEY);
  const ranges = new Map<string, TopicRange>();
  if (!isPlainObject(raw)) return ranges;
  for (const [topic, entry] of Object.entries(raw)) {
    if (!isPlainObject(entry) || ranges.size >= MAX_TOPIC_RANGES) continue;
    const min = finite(entry['min']);
    const max = finite(entry['max']);
    const hysteresis = finite(entry['hysteresis']);
    const delayMs = finite(entry['delayMs']);
    const noDataMs = noDataDeadline(entry['noDataMs']);
    const severity = readSeverity(entry['severity']);
    if (min === undefined && max === undefined && noDataMs === undefined) continue;
    ranges.set(topic, {
      ...(min === undefined ? {} : { min }),
      ...(max === undefined ? {} : { max }),
      ...(hysteresis === undefined || hysteresis < 0 ? {} : { hysteresis }),
      ...(delayMs === undefined || delayMs <= 0 ? {} : { delayMs: Math.min(delayMs, MAX_ALERT_DELAY_MS) }),
      ...(noDataMs === undefined ? {} : { noDataMs }),
      ...(severity === undefined ? {} : { severity }),
    });
  }
  return ranges;
}

/** A stored no-data deadline within its bounds (clamped), or undefined when it is not one. */
function noDataDeadline(value: unknown): number | undefined {
  const ms = finite(value);
  return ms === undefined || ms <= 0 ? undefined : Math.min(Math.max(ms, MIN_NO_DATA_MS), MAX_NO_DATA_MS);
}

/**
 * The group setting that holds a no-data deadline per box, by its deviceId, `*` standing for every box of
 * the group: `{"boxAlerts": {"*": {"noDataMs": 900000}, "a0b1c2d3e4f5": {"noDataMs": 300000}}}`.
 */
export const BOX_ALERTS_KEY = groupSettingKeys.boxAlerts;
/** The entry of `boxAlerts` for every box of the group without its own. */
export const EVERY_BOX = '*';

export interface BoxAlert {
  readonly noDataMs: number;
  /** How loud its alert is; absent: `warning`. */
  readonly severity?: Severity;
}

/** The boxes' deadlines the settings hold; what is not one is skipped, as for the ranges. */
export function readBoxAlerts(settings: unknown): Map<string, BoxAlert> {
  const raw = readSetting(settings, BOX_ALERTS_KEY);
  const alerts = new Map<string, BoxAlert>();
  if (!isPlainObject(raw)) return alerts;
  for (const [deviceId, entry] of Object.entries(raw)) {
    if (!isPlainObject(entry)) continue;
    const noDataMs = noDataDeadline(entry['noDataMs']);
    const severity = readSeverity(entry['severity']);
    if (noDataMs !== undefined && alerts.size < MAX_TOPIC_RANGES)
      alerts.set(deviceId, { noDataMs, ...(severity === undefined ? {} : { severity }) });
  }
  return alerts;
}

/** The settings with `boxAlerts` replaced, every other key kept where it was. */
export function withBoxAlerts(settings: unknown, alerts: ReadonlyMap<string, BoxAlert>): unknown {
  return withSetting(settings, BOX_ALERTS_KEY, alerts.size === 0 ? undefined : Object.fromEntries(alerts));
}

/** The settings with `alertRanges` replaced, every other key kept where it was (see withSetting). */
export function withTopicRanges(settings: unknown, ranges: ReadonlyMap<string, TopicRange>): unknown {
  return withSetting(settings, ALERT_RANGES_KEY, ranges.size === 0 ? undefined : Object.fromEntries(ranges));
}

/** The original's settings keys, which bound these topics. */
const originalRanges = [
  {
    label: 'Temperature',
    topics: [sensorTopics.temperature],
    min: 'tempMin',
    max: 'tempMax',
    source: 'tempMin/tempMax',
  },
  {
    label: 'Soil moisture',
    topics: [sensorTopics.moisture1, sensorTopics.moisture2, sensorTopics.moisture3],
    min: 'moistureMin',
    max: 'moistureMax',
    source: 'moistureMin/moistureMax',
  },
] as const;

export interface WatchedRange {
  /** How alerts name the topic. */
  readonly label: string;
  readonly range: TopicRange;
  /** Where the range comes from: the topic's own, or the original's keys. */
  readonly source: 'alertRanges' | 'tempMin/tempMax' | 'moistureMin/moistureMax';
}

/**
 * Every topic the group's alerts watch, with its range: the original's keys for their topics, and each
 * topic's own range, which wins over them for its topic (its bounds do, when it has any).
 */
export function watchedRanges(settings: unknown): Map<string, WatchedRange> {
  const watched = new Map<string, WatchedRange>();
  for (const original of originalRanges) {
    const min = readNumberSetting(settings, original.min);
    const max = readNumberSetting(settings, original.max);
    if (min === undefined && max === undefined) continue;
    for (const topic of original.topics)
      watched.set(topic, {
        label: `${original.label} (${topic})`,
        range: { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) },
        source: original.source,
      });
  }
  for (const [topic, range] of readTopicRanges(settings)) {
    // A range of its own with no bounds (a no-data deadline, or bounds a stage moved to tempMin/tempMax)
    // keeps the original's bounds for its topic rather than dropping them.
    const original = watched.get(topic);
    const merged =
      original !== undefined && range.min === undefined && range.max === undefined
        ? { ...original.range, ...range }
        : range;
    watched.set(topic, { label: topic, range: merged, source: ALERT_RANGES_KEY });
  }
  return watched;
}
