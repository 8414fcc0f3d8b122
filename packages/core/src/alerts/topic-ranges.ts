import { readNumberSetting, readSetting } from '../groups/group-settings.js';
import { sensorTopics } from '../readings/reading.js';
import { isPlainObject } from '../shared/validation.js';

/**
 * The group setting that holds a range per topic, beside the original's `tempMin`/`tempMax` and
 * `moistureMin`/`moistureMax`: `{"alertRanges": {"esp/air/humidity": {"min": 40, "max": 80,
 * "hysteresis": 2, "delayMs": 120000}}}`.
 */
export const ALERT_RANGES_KEY = 'alertRanges';
/** Ranges one group may hold: each is checked on every evaluation of the group. */
export const MAX_TOPIC_RANGES = 100;
export const MAX_ALERT_DELAY_MS = 24 * 60 * 60_000;

export interface TopicRange {
  readonly min?: number;
  readonly max?: number;
  /** How far back inside a bound the value must come for its alert to end; absent: the engine's dead band. */
  readonly hysteresis?: number;
  /** How long the value must stay outside before the alert opens; absent: at once. */
  readonly delayMs?: number;
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
    if (min === undefined && max === undefined) continue;
    ranges.set(topic, {
      ...(min === undefined ? {} : { min }),
      ...(max === undefined ? {} : { max }),
      ...(hysteresis === undefined || hysteresis < 0 ? {} : { hysteresis }),
      ...(delayMs === undefined || delayMs <= 0 ? {} : { delayMs: Math.min(delayMs, MAX_ALERT_DELAY_MS) }),
    });
  }
  return ranges;
}

/**
 * The settings with `alertRanges` replaced, every other key kept where it was: in the array of one-key
 * objects clients write, its own entry (appended when new); in a plain object, its key.
 */
export function withTopicRanges(settings: unknown, ranges: ReadonlyMap<string, TopicRange>): unknown {
  const value = Object.fromEntries(ranges);
  if (isPlainObject(settings)) {
    const rest = without(settings, ALERT_RANGES_KEY);
    return ranges.size === 0 ? rest : { ...rest, [ALERT_RANGES_KEY]: value };
  }
  let placed = false;
  const entries = (Array.isArray(settings) ? (settings as unknown[]) : []).flatMap((entry) => {
    if (!(isPlainObject(entry) && Object.hasOwn(entry, ALERT_RANGES_KEY))) return [entry];
    const rest = without(entry, ALERT_RANGES_KEY);
    if (placed || ranges.size === 0) return Object.keys(rest).length === 0 ? [] : [rest];
    placed = true;
    return [{ ...rest, [ALERT_RANGES_KEY]: value }];
  });
  return placed || ranges.size === 0 ? entries : [...entries, { [ALERT_RANGES_KEY]: value }];
}

function without(object: Readonly<Record<string, unknown>>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([name]) => name !== key));
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
 * topic's own range, which wins over them for its topic.
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
  for (const [topic, range] of readTopicRanges(settings))
    watched.set(topic, { label: topic, range, source: ALERT_RANGES_KEY });
  return watched;
}
