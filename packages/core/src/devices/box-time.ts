import { InvalidInputError } from '../shared/errors.js';
import { instantOfWallClock } from '../shared/time-zone.js';
import { parseDateTime } from '../shared/validation.js';

/**
 * The instants a box reading may carry: ISO 8601's four-digit years, which every store holds and every
 * zone rule converts (a Date reaches further, but the stores and Temporal do not agree at its ends).
 */
export const EARLIEST_BOX_TIME = new Date('0001-01-01T00:00:00.000Z');
export const LATEST_BOX_TIME = new Date('9999-12-31T23:59:59.999Z');

const BOX_DATE_PROBLEM =
  "must be the box's wall-clock time (2025-06-15T14:03:20.000Z), a date-time with an offset " +
  '(2025-06-15T12:03:20.000+00:00) or {"$numberLong": "<ms>"}, within the years 0001 to 9999';

// The firmware's shape (a literal Z on a wall-clock time), the same without the Z, or with a numeric offset.
const stampPattern = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(Z|[+-]\d{2}:\d{2})?$/u;
const millisecondsPattern = /^-?\d{1,16}$/u;

function inRange(ms: number): boolean {
  return ms >= EARLIEST_BOX_TIME.getTime() && ms <= LATEST_BOX_TIME.getTime();
}

/**
 * A `$date` of the box endpoint. The firmware stamps its zone's wall clock and labels it `Z` (COMPAT
 * "Boxes"), so on this endpoint a `Z`, or no offset at all, means a wall-clock time to be read in the
 * group's box zone; a numeric offset (`+00:00` for UTC) and `$numberLong` milliseconds are instants, taken
 * as they say.
 */
export class BoxStamp {
  private constructor(
    /** The wall clock's fields as UTC milliseconds, or the instant. */
    readonly ms: number,
    readonly wallClock: boolean,
  ) {}

  /** The `$date` value of a document: text or `{"$numberLong": "<ms>"}`; anything else is refused. */
  static of(value: unknown, field: string): BoxStamp {
    const stamp = typeof value === 'string' ? stampOfText(value) : stampOfMilliseconds(value);
    if (stamp === undefined || !inRange(stamp.ms)) throw InvalidInputError.forField(field, BOX_DATE_PROBLEM);
    return new BoxStamp(stamp.ms, stamp.wallClock);
  }

  /** The instant it stands for, a wall-clock time read in `timeZone`; undefined when that is out of range. */
  instantIn(timeZone: string, arrival: Date): Date | undefined {
    const instant = this.wallClock
      ? instantOfWallClock(new Date(this.ms), timeZone, arrival)
      : new Date(this.ms);
    return inRange(instant.getTime()) ? instant : undefined;
  }

  /** The instant it stands for; a refusal naming `field` when that is out of range. */
  requireInstantIn(timeZone: string, arrival: Date, field: string): Date {
    const instant = this.instantIn(timeZone, arrival);
    if (instant === undefined) throw InvalidInputError.forField(field, BOX_DATE_PROBLEM);
    return instant;
  }
}

interface Stamp {
  readonly ms: number;
  readonly wallClock: boolean;
}

function stampOfText(text: string): Stamp | undefined {
  const match = stampPattern.exec(text);
  if (match === null) return undefined;
  const [, local = '', offset] = match;
  // parseDateTime checks the calendar; a wall-clock time is parsed as if it were UTC to get its fields.
  const wallClock = offset === undefined || offset === 'Z';
  const date = parseDateTime(wallClock ? `${local}Z` : text);
  return date === undefined ? undefined : { ms: date.getTime(), wallClock };
}

function stampOfMilliseconds(value: unknown): Stamp | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  const [only] = entries;
  if (entries.length !== 1 || only?.[0] !== '$numberLong' || typeof only[1] !== 'string') return undefined;
  if (!millisecondsPattern.test(only[1])) return undefined;
  return { ms: Number(only[1]), wallClock: false };
}
