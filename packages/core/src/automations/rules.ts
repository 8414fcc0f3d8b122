import { type Frequency, type SensorAutomation, type TimeAutomation } from '../actions/action.js';
import { sensorTopics } from '../readings/reading.js';
import { derivedTopics } from '../readings/topics.js';
import { fromLocal, toLocal } from '../shared/time-zone.js';

const weekdayNames = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** `weekday` is 0 for Sunday through 6 for Saturday. */
export function frequencyMatches(frequency: Frequency, weekday: number): boolean {
  switch (frequency) {
    case 'every day':
      return true;
    case 'weekdays':
      return weekday >= 1 && weekday <= 5;
    case 'weekends':
      return weekday === 0 || weekday === 6;
    default:
      return weekdayNames[weekday] === frequency;
  }
}

const pad = (n: number): string => String(n).padStart(2, '0');

export interface Slot {
  /** The local day of the slot, `YYYY-MM-DD`. */
  readonly localDate: string;
  readonly at: Date;
}

/** How far back a missed slot is looked for: a weekly rule's latest slot is at most 7 days old. */
export const SLOT_LOOKBACK_DAYS = 7;

/**
 * The latest slot of a time rule at or before `now` (its minute, in the zone, on a local day the frequency
 * includes), looking back at most `SLOT_LOOKBACK_DAYS` days. In a daylight-saving gap the slot moves
 * forward by the gap (02:30 fires at 03:30); in an overlap it is the first pass only.
 */
export function latestSlot(rule: TimeAutomation, now: Date, timeZone: string): Slot | undefined {
  const [hour = 0, minute = 0] = rule.time.split(':').map(Number);
  const today = toLocal(now, timeZone);
  for (let daysBack = 0; daysBack <= SLOT_LOOKBACK_DAYS; daysBack += 1) {
    const day = new Date(Date.UTC(today.year, today.month - 1, today.day - daysBack));
    if (!frequencyMatches(rule.frequency, day.getUTCDay())) continue;
    const local = { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() };
    const at = fromLocal({ ...local, hour, minute }, timeZone);
    if (at.getTime() <= now.getTime())
      return { localDate: `${local.year}-${pad(local.month)}-${pad(local.day)}`, at };
  }
  return undefined;
}

/**
 * The earliest slot of a time rule after `now` (within the next `SLOT_LOOKBACK_DAYS` + 1 days), by the same
 * local-time rules as latestSlot: at that instant latestSlot answers this slot.
 */
export function nextSlot(rule: TimeAutomation, now: Date, timeZone: string): Slot | undefined {
  const [hour = 0, minute = 0] = rule.time.split(':').map(Number);
  const today = toLocal(now, timeZone);
  for (let daysAhead = 0; daysAhead <= SLOT_LOOKBACK_DAYS + 1; daysAhead += 1) {
    const day = new Date(Date.UTC(today.year, today.month - 1, today.day + daysAhead));
    if (!frequencyMatches(rule.frequency, day.getUTCDay())) continue;
    const local = { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() };
    const at = fromLocal({ ...local, hour, minute }, timeZone);
    if (at.getTime() > now.getTime())
      return { localDate: `${local.year}-${pad(local.month)}-${pad(local.day)}`, at };
  }
  return undefined;
}

/** The latest slot of a rule if its minute came no longer than `graceMs` ago (23:59 survives midnight). */
export function dueSlot(
  rule: TimeAutomation,
  now: Date,
  timeZone: string,
  graceMs: number,
): Slot | undefined {
  const slot = latestSlot(rule, now, timeZone);
  return slot !== undefined && now.getTime() - slot.at.getTime() < graceMs ? slot : undefined;
}

const sensorAliases: Readonly<Record<string, string>> = {
  temperature: sensorTopics.temperature,
  temp: sensorTopics.temperature,
  humidity: sensorTopics.humidity,
  lux: sensorTopics.lux,
  light: sensorTopics.lux,
  moisture: sensorTopics.moisture1,
  moisture1: sensorTopics.moisture1,
  moisture_1: sensorTopics.moisture1,
  moisture2: sensorTopics.moisture2,
  moisture_2: sensorTopics.moisture2,
  moisture3: sensorTopics.moisture3,
  moisture_3: sensorTopics.moisture3,
  pressure: 'esp/air/pressure',
  co2: 'esp/air/co2',
  water: 'esp/ground/water',
  // The series Hortus derives from the readings (docs/metrics.md).
  vpd: derivedTopics.vpd,
  dew_point: derivedTopics.dewPoint,
  dewpoint: derivedTopics.dewPoint,
  ppfd: derivedTopics.ppfd,
  dli: derivedTopics.dli,
};

/** The reading topic a sensor rule watches: a known sensor name, or a topic written out in full. */
export function sensorTopic(sensor: string): string | undefined {
  const name = sensor.trim().toLowerCase().replace(/\s+/gu, '_');
  if (Object.hasOwn(sensorAliases, name)) return sensorAliases[name];
  return sensor.includes('/') ? sensor.trim() : undefined;
}

export type RuleSide = 'beyond' | 'within';

/**
 * Which side of its threshold a sensor rule is on. Once beyond, it counts as back within only after the
 * value has moved `deadBand` past the threshold, so a value hovering at the threshold does not flap.
 */
export function ruleSide(
  rule: SensorAutomation,
  value: number,
  previous: RuleSide | undefined,
  deadBand: number,
): RuleSide {
  const threshold = Number(rule.value);
  const above = rule.condition === 'above';
  if (above ? value > threshold : value < threshold) return 'beyond';
  if (previous !== 'beyond') return 'within';
  const rearmed = above ? value <= threshold - deadBand : value >= threshold + deadBand;
  return rearmed ? 'within' : 'beyond';
}

export function describeTimeRule(rule: TimeAutomation): string {
  return `${rule.time} ${rule.frequency} -> ${rule.action}`;
}

export function describeSensorRule(rule: SensorAutomation): string {
  return `${rule.sensor} ${rule.condition} ${rule.value} -> ${rule.action}`;
}
