import { InvalidInputError } from './errors.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
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

const weekdays = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

export function toLocal(instant: Date, timeZone: string): LocalDateTime {
  const parts: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(instant)) parts[part.type] = part.value;
  return {
    year: Number(parts['year']),
    month: Number(parts['month']),
    day: Number(parts['day']),
    hour: Number(parts['hour']),
    minute: Number(parts['minute']),
    second: Number(parts['second']),
    weekday: weekdays.indexOf(parts['weekday'] ?? ''),
  };
}

/** Offset of the zone from UTC at that instant, in milliseconds (positive east of Greenwich). */
function offsetMs(instant: Date, timeZone: string): number {
  const local = toLocal(instant, timeZone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

/**
 * The instant at which the wall clock of the zone shows the given local time. In a gap (spring forward)
 * the time is moved forward by the gap's length (02:30 becomes 03:30, as Temporal's "compatible" rule and
 * cron do); in an overlap (fall back) it is the earlier of the two instants.
 */
export function fromLocal(
  local: { year: number; month: number; day: number; hour?: number; minute?: number },
  timeZone: string,
): Date {
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour ?? 0, local.minute ?? 0);
  // Two passes settle on the offset in force at the target instant, also around transitions.
  let guess = wall - offsetMs(new Date(wall), timeZone);
  guess = wall - offsetMs(new Date(guess), timeZone);
  const earlier = wall - offsetMs(new Date(guess - 3_600_000), timeZone);
  if (earlier < guess && sameWallTime(earlier, wall, timeZone)) return new Date(earlier);
  return new Date(guess);
}

function sameWallTime(instant: number, wall: number, timeZone: string): boolean {
  const local = toLocal(new Date(instant), timeZone);
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute) === wall;
}

/** The start of the local calendar day containing `instant`, and the start of the next one. */
export function localDayBounds(instant: Date, timeZone: string): { start: Date; end: Date } {
  const today = toLocal(instant, timeZone);
  const start = fromLocal({ year: today.year, month: today.month, day: today.day }, timeZone);
  const tomorrow = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
  const end = fromLocal(
    { year: tomorrow.getUTCFullYear(), month: tomorrow.getUTCMonth() + 1, day: tomorrow.getUTCDate() },
    timeZone,
  );
  return { start, end };
}
