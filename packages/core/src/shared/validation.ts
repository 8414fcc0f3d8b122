import { InvalidInputError } from './errors.js';

/** Longest name (group, object, topic segment) we accept; long enough for any real box, short enough to index. */
export const NAME_MAX_LENGTH = 100;
export const TEXT_MAX_LENGTH = 2000;

export function requireText(value: unknown, field: string, maxLength = NAME_MAX_LENGTH): string {
  if (typeof value !== 'string') throw InvalidInputError.forField(field, 'must be a string');
  const text = value.trim();
  if (text.length === 0) throw InvalidInputError.forField(field, 'must not be empty');
  if (text.length > maxLength)
    throw InvalidInputError.forField(field, `must be at most ${maxLength} characters`);
  return text;
}

export function optionalText(value: unknown, field: string, maxLength = NAME_MAX_LENGTH): string | undefined {
  return value === undefined ? undefined : requireText(value, field, maxLength);
}

/** Accepts numbers and numeric strings ("23.45": older boxes sent text) and yields a finite number. */
export function requireNumber(value: unknown, field: string): number {
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isFinite(parsed)) {
    throw InvalidInputError.forField(field, 'must be a finite number');
  }
  return parsed;
}

export function optionalNumber(value: unknown, field: string): number | undefined {
  return value === undefined ? undefined : requireNumber(value, field);
}

export function requireInteger(value: unknown, field: string, min: number, max: number): number {
  const parsed = requireNumber(value, field);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw InvalidInputError.forField(field, `must be a whole number from ${min} to ${max}`);
  }
  return parsed;
}

// RFC 3339 section 5.6: full-date "T" full-time with a required offset; seconds may be left out (ISO 8601).
const dateTimePattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/u;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/u;
const DATE_TIME_PROBLEM = 'must be an RFC 3339 date-time with Z or an offset, such as 2025-06-15T10:00:00Z';

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Milliseconds of a calendar date and wall time in UTC, or NaN when any part is out of its range. */
function utcMillis(parts: readonly number[]): number {
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millisecond = 0] = parts;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN;
  if (hour > 23 || minute > 59 || second > 59) return Number.NaN;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}

/**
 * The one parser of instants from outside: RFC 3339 date-times only, calendar-checked, with Z or an
 * offset (never read in the server's zone). `2025-02-30`, `"1"` and `March 7 2025` are refused, where
 * `new Date()` would guess. Answers undefined for anything else.
 */
export function parseDateTime(text: string): Date | undefined {
  const match = dateTimePattern.exec(text.trim());
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const local = utcMillis([year, month, day, hour, minute, second ?? '0'].map(Number).concat(millisecond));
  let offsetMs = 0;
  if (zulu === undefined) {
    const hours = Number(offsetHours);
    const minutes = Number(offsetMinutes);
    if (hours > 23 || minutes > 59) return undefined;
    offsetMs = (sign === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  const time = local - offsetMs;
  return Number.isNaN(time) || Math.abs(time) > 8.64e15 ? undefined : new Date(time);
}

/**
 * A bound of a time range: an RFC 3339 date-time, or a calendar date alone, which stands for the first
 * millisecond of that day (UTC) as a start and its last one as an end.
 */
export function parseDateBound(text: string, bound: 'start' | 'end'): Date | undefined {
  const match = datePattern.exec(text.trim());
  if (match === null) return parseDateTime(text);
  const time = utcMillis(match.slice(1).map(Number));
  if (Number.isNaN(time)) return undefined;
  return new Date(bound === 'start' ? time : time + 86_400_000 - 1);
}

/** A point in time from outside (a reading's or a notification's time); a Date passes as it is. */
export function requireDate(value: unknown, field: string): Date {
  const date = value instanceof Date ? value : typeof value === 'string' ? parseDateTime(value) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw InvalidInputError.forField(field, DATE_TIME_PROBLEM);
  }
  return new Date(date.getTime());
}

export function optionalDate(value: unknown, field: string): Date | undefined {
  return value === undefined ? undefined : requireDate(value, field);
}

/** A start or end of a range filter: a date-time, or a date alone meaning the whole day (see parseDateBound). */
export function optionalDateBound(value: unknown, field: string, bound: 'start' | 'end'): Date | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Date) return requireDate(value, field);
  const date = typeof value === 'string' ? parseDateBound(value, bound) : undefined;
  if (date === undefined) {
    throw InvalidInputError.forField(
      field,
      'must be an RFC 3339 date-time with Z or an offset (2025-06-15T10:00:00Z) or a date (2025-06-15)',
    );
  }
  return date;
}

export function requireDateBound(value: unknown, field: string, bound: 'start' | 'end'): Date {
  const date = optionalDateBound(value, field, bound);
  if (date === undefined) throw InvalidInputError.forField(field, 'is required');
  return date;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
