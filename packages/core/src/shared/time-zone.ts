import { Temporal } from 'temporal-polyfill';
import { InvalidInputError } from './errors.js';

// Zone rules come from Temporal (the polyfill on Node 20): no hand-written offset arithmetic here.

/**
 * The zone every clock of Hortus is read in unless configured: Berlin, the zone firmware 1.0.4 stamps its
 * readings in (COMPAT "Boxes"), so that time rules, box stamps and what people are shown agree out of the box.
 */
export const DEFAULT_TIME_ZONE = 'Europe/Berlin';

const validity = new Map<string, boolean>();

export function isValidTimeZone(timeZone: string): boolean {
  let valid = validity.get(timeZone);
  if (valid === undefined) {
    try {
      // Intl refuses bare offsets ("+01:00") that Temporal would take; a group names an IANA zone.
      new Intl.DateTimeFormat('en-US', { timeZone });
      Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(timeZone);
      valid = true;
    } catch {
      valid = false;
    }
    if (validity.size < 1000) validity.set(timeZone, valid);
  }
  return valid;
}

export function assertTimeZone(timeZone: string): string {
  if (!isValidTimeZone(timeZone))
    throw InvalidInputError.forField('timeZone', `"${timeZone}" is not an IANA time zone`);
  return timeZone;
}

export interface LocalDateTime {
  readonly year: number;
  readonly month: number; // 1-12
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** 0 = Sunday ... 6 = Saturday */
  readonly weekday: number;
}

function zoned(instant: Date, timeZone: string): Temporal.ZonedDateTime {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone);
}

export function toLocal(instant: Date, timeZone: string): LocalDateTime {
  const z = zoned(instant, timeZone);
  return {
    year: z.year,
    month: z.month,
    day: z.day,
    hour: z.hour,
    minute: z.minute,
    second: z.second,
    weekday: z.dayOfWeek % 7,
  };
}

/**
 * The instant at which the wall clock of the zone shows the given local time. In a gap (spring forward)
 * the time is moved forward by the gap's length (02:30 becomes 03:30: Temporal's "compatible", as cron
 * does); in an overlap (fall back) it is the earlier of the two instants. Out-of-range days roll over
 * (day 0 is the last day of the month before), as Date.UTC does.
 */
export function fromLocal(
  local: { year: number; month: number; day: number; hour?: number; minute?: number },
  timeZone: string,
): Date {
  const date = Temporal.PlainDate.from({ year: local.year, month: local.month, day: 1 }).add({
    days: local.day - 1,
  });
  const wall = date.toPlainDateTime({ hour: local.hour ?? 0, minute: local.minute ?? 0 });
  return new Date(wall.toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds);
}

/**
 * The later instant at which the wall clock shows this local time when the zone shows it twice (the hour
 * repeated when the clocks go back); undefined when it shows it once or never.
 */
export function laterInstantOfRepeatedLocal(
  local: { year: number; month: number; day: number; hour: number; minute: number },
  timeZone: string,
): Date | undefined {
  const wall = Temporal.PlainDateTime.from(local);
  const earlier = wall.toZonedDateTime(timeZone, { disambiguation: 'earlier' });
  const later = wall.toZonedDateTime(timeZone, { disambiguation: 'later' });
  // In a gap both differ from the wall time asked for; in an overlap both show it.
  const shows = (z: Temporal.ZonedDateTime): boolean => z.hour === local.hour && z.minute === local.minute;
  return earlier.epochMilliseconds !== later.epochMilliseconds && shows(earlier) && shows(later)
    ? new Date(later.epochMilliseconds)
    : undefined;
}

/** The start of the local calendar day containing `instant`, and the start of the next one. */
export function localDayBounds(instant: Date, timeZone: string): { start: Date; end: Date } {
  const today = zoned(instant, timeZone).toPlainDate();
  return {
    start: new Date(today.toZonedDateTime(timeZone).epochMilliseconds),
    end: new Date(today.add({ days: 1 }).toZonedDateTime(timeZone).epochMilliseconds),
  };
}

/**
 * The local hours of the day containing `now` that have begun by `now`, each with its instants. On the
 * day clocks fall back the repeated hour is one span of two hours; on the day they spring forward the
 * skipped hour is absent.
 */
export function localHoursSoFar(now: Date, timeZone: string): { hour: number; start: Date; end: Date }[] {
  const today = zoned(now, timeZone).toPlainDate();
  const first = today.toZonedDateTime(timeZone);
  const last = today.add({ days: 1 }).toZonedDateTime(timeZone);
  const dayStart = first.epochMilliseconds;
  const dayEnd = last.epochMilliseconds;
  const hours: { hour: number; start: Date; end: Date }[] = [];
  // Most days have one offset throughout: 24 plain hours, without asking the zone 24 times.
  const plain =
    dayEnd - dayStart === 86_400_000 &&
    first.hour === 0 &&
    first.offsetNanoseconds === last.offsetNanoseconds;
  const startOf = (hour: number): number =>
    hour === 0
      ? dayStart
      : hour === 24
        ? dayEnd
        : plain
          ? dayStart + hour * 3_600_000
          : today.toPlainDateTime({ hour }).toZonedDateTime(timeZone, { disambiguation: 'compatible' })
              .epochMilliseconds;
  for (let hour = 0; hour < 24; hour += 1) {
    const start = startOf(hour);
    if (start > now.getTime()) break;
    const end = startOf(hour + 1);
    // A skipped hour starts where the next one does, or shows another hour on the clock.
    if (end > start && (plain || toLocal(new Date(start), timeZone).hour === hour))
      hours.push({ hour, start: new Date(start), end: new Date(end) });
  }
  return hours;
}

/**
 * The instant a wall-clock reading of the zone stands for, where the wall time is given as the UTC fields
 * of `wall` (a box stamps its local time with a `Z`). A wall time that happens twice (clocks going back)
 * is read as the one of its two instants nearer `arrival`; one that never happens (clocks going forward)
 * is moved forward by the gap, as fromLocal does.
 */
export function instantOfWallClock(wall: Date, timeZone: string, arrival: Date): Date {
  // Boxes send a reading per request: asking Temporal each time cost about as much as the rest of the
  // ingest. Within a wall-clock hour that is not at a transition the offset is the same throughout.
  const wallMs = wall.getTime();
  const hour = Math.floor(wallMs / HOUR_MS);
  const zoneHours = steadyHours.get(timeZone);
  const known = zoneHours?.get(hour);
  if (known !== undefined) return new Date(wallMs - known);
  const instant = exactInstantOfWallClock(wallMs, timeZone, arrival);
  const offset = steadyOffsetOfHour(hour, timeZone);
  if (offset !== undefined) {
    // Bounded: boxes stamp recent hours; a flood of odd stamps only refills it.
    if (zoneHours === undefined || zoneHours.size >= 1000)
      steadyHours.set(timeZone, new Map([[hour, offset]]));
    else zoneHours.set(hour, offset);
  }
  return instant;
}

const HOUR_MS = 3_600_000;
/** Per zone: wall-clock hours (UTC-field ms / 1 h) whose every wall time has one instant, at this offset. */
const steadyHours = new Map<string, Map<number, number>>();

/** The offset of a wall time that happens exactly once; undefined in a gap or an overlap. */
function uniqueOffset(wallMs: number, timeZone: string): number | undefined {
  const plain = Temporal.Instant.fromEpochMilliseconds(wallMs).toZonedDateTimeISO('UTC').toPlainDateTime();
  const earlier = plain.toZonedDateTime(timeZone, { disambiguation: 'earlier' }).epochMilliseconds;
  const later = plain.toZonedDateTime(timeZone, { disambiguation: 'later' }).epochMilliseconds;
  return earlier === later ? wallMs - earlier : undefined;
}

/**
 * The one offset of a wall-clock hour whose first and last millisecond each happen once, at the same offset:
 * no transition lies within it (no zone has two that cancel out within an hour).
 */
function steadyOffsetOfHour(hour: number, timeZone: string): number | undefined {
  const first = uniqueOffset(hour * HOUR_MS, timeZone);
  return first !== undefined && first === uniqueOffset((hour + 1) * HOUR_MS - 1, timeZone)
    ? first
    : undefined;
}

function exactInstantOfWallClock(wallMs: number, timeZone: string, arrival: Date): Date {
  const plain = Temporal.Instant.fromEpochMilliseconds(wallMs).toZonedDateTimeISO('UTC').toPlainDateTime();
  const earlier = plain.toZonedDateTime(timeZone, { disambiguation: 'earlier' }).epochMilliseconds;
  const later = plain.toZonedDateTime(timeZone, { disambiguation: 'later' }).epochMilliseconds;
  if (earlier === later) return new Date(earlier);
  const gap = plain.toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds;
  // In a gap 'earlier' and 'later' fall either side of it; in an overlap both show this wall time.
  const overlap =
    Temporal.Instant.fromEpochMilliseconds(earlier)
      .toZonedDateTimeISO(timeZone)
      .toPlainDateTime()
      .equals(plain) &&
    Temporal.Instant.fromEpochMilliseconds(later)
      .toZonedDateTimeISO(timeZone)
      .toPlainDateTime()
      .equals(plain);
  if (!overlap) return new Date(gap);
  const at = arrival.getTime();
  return new Date(Math.abs(earlier - at) <= Math.abs(later - at) ? earlier : later);
}

/** The instant as the zone's wall clock shows it, with its offset then (DST included): `2026-03-29T03:30:00+02:00`. */
export function localTimeText(instant: Date, timeZone: string): string {
  return zoned(instant, timeZone).toString({ timeZoneName: 'never', smallestUnit: 'second' });
}

const zoneNames = new Map<string, Intl.DateTimeFormat[]>();

/**
 * The zone's short name at that instant when it has one in letters ("CET", "EDT", "UTC"); else its offset
 * ("+05:30"). Intl names some zones only in one locale (CET in en-GB, EST in en-US), so both are asked.
 */
function zoneLabel(z: Temporal.ZonedDateTime, instant: Date, timeZone: string): string {
  let formats = zoneNames.get(timeZone);
  if (formats === undefined) {
    formats = ['en-US', 'en-GB'].map(
      (locale) => new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' }),
    );
    if (zoneNames.size < 1000) zoneNames.set(timeZone, formats);
  }
  for (const format of formats) {
    const name = format.formatToParts(instant).find((part) => part.type === 'timeZoneName')?.value;
    if (name !== undefined && /^[A-Z]{2,5}$/u.test(name)) return name;
  }
  return z.offset;
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * An instant as people read it: the wall clock of the zone with the zone's name or offset, to the second
 * ("2026-11-29 14:05:03 CET"). The name tells the two 02:30 of a fall-back night apart (CEST, then CET).
 */
export function formatLocalTime(instant: Date, timeZone: string): string {
  if (Number.isNaN(instant.getTime())) return 'Invalid Date';
  const z = zoned(instant, timeZone);
  const year = z.year < 0 || z.year > 9999 ? String(z.year) : String(z.year).padStart(4, '0');
  return `${year}-${two(z.month)}-${two(z.day)} ${two(z.hour)}:${two(z.minute)}:${two(z.second)} ${zoneLabel(z, instant, timeZone)}`;
}
