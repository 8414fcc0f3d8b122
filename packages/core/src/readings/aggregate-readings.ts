import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError } from '../shared/errors.js';
import { requireInteger } from '../shared/validation.js';
import { MAX_READINGS_LIMIT, type ReadingBucket } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';
import { type ReadingQuery, toReadingRange } from './query-readings.js';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

export const MIN_BUCKET_MS = SECOND_MS;
export const MAX_BUCKET_MS = 30 * DAY_MS;
/** Most buckets one answer may span: a chart is never wider than this many points. */
export const MAX_BUCKETS = 5000;
/** The window when no startDate is given: the 30 days up to endDate (or up to now). */
export const DEFAULT_AGGREGATE_WINDOW_MS = 30 * DAY_MS;

const unitMs = { s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS } as const;
const intervalPattern = /^\s*(\d{1,7})\s*([smhd])\s*$/u;

/**
 * Bucket sizes `points` chooses from: round sizes make clean axis labels, and sizes that are whole minutes or
 * hours let a store answer from what it summarised at ingest.
 */
const roundBucketsMs = [
  ...[1, 2, 5, 10, 15, 30].map((n) => n * SECOND_MS),
  ...[1, 2, 5, 10, 15, 30].map((n) => n * MINUTE_MS),
  ...[1, 2, 3, 6, 12].map((n) => n * HOUR_MS),
  ...[1, 2, 7, 14, 30].map((n) => n * DAY_MS),
];

export interface AggregateQuery extends ReadingQuery {
  /** Bucket size such as `20s`, `5m`, `1h`, `1d`. */
  readonly interval?: unknown;
  /** At most this many buckets; the bucket size is the smallest round size that fits. */
  readonly points?: unknown;
}

/** Whether a range query asks for buckets instead of readings. */
export function wantsAggregation(query: Pick<AggregateQuery, 'interval' | 'points'>): boolean {
  return query.interval !== undefined || query.points !== undefined;
}

/** `<whole number><s|m|h|d>`, from one second to 30 days, in milliseconds. */
export function parseInterval(value: unknown): number {
  const match = typeof value === 'string' ? intervalPattern.exec(value) : null;
  const bucketMs = match === null ? Number.NaN : Number(match[1]) * unitMs[match[2] as keyof typeof unitMs];
  if (!(bucketMs >= MIN_BUCKET_MS && bucketMs <= MAX_BUCKET_MS)) {
    throw InvalidInputError.forField(
      'interval',
      'must be a duration from 1s to 30d such as 20s, 5m, 1h or 1d',
    );
  }
  return bucketMs;
}

interface Window {
  readonly start: number;
  readonly end: number;
}

/**
 * The inclusive window the buckets cover. A missing endDate means the end of the bucket holding now, a
 * missing startDate the start of the bucket holding the instant 30 days before the end: then the window is
 * made of whole buckets, which a store can answer from its summaries alone.
 */
function windowFor(
  startDate: Date | undefined,
  endDate: Date | undefined,
  bucketMs: number,
  now: number,
): Window {
  const end = endDate?.getTime() ?? (Math.floor(now / bucketMs) + 1) * bucketMs - 1;
  const start = startDate?.getTime() ?? Math.floor((end - DEFAULT_AGGREGATE_WINDOW_MS) / bucketMs) * bucketMs;
  return { start, end };
}

function bucketsIn(window: Window, bucketMs: number): number {
  return Math.floor(window.end / bucketMs) - Math.floor(window.start / bucketMs) + 1;
}

/** The smallest round bucket size giving at most `points` buckets; past 30 days, whole multiples of 30 days. */
function bucketForPoints(points: number, spanMs: number, fits: (bucketMs: number) => boolean): number {
  for (const bucketMs of roundBucketsMs) if (fits(bucketMs)) return bucketMs;
  let bucketMs = Math.max(1, Math.floor(spanMs / points / MAX_BUCKET_MS)) * MAX_BUCKET_MS;
  while (!fits(bucketMs)) bucketMs += MAX_BUCKET_MS;
  return bucketMs;
}

@injectable()
export class AggregateReadings {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Readings of one topic summarised per time bucket `{time, min, max, avg, count}`, newest bucket first,
   * empty buckets left out. Buckets are aligned to the Unix epoch (UTC). Either `interval` names the bucket
   * size, or `points` caps the number of buckets. Value filters apply before summarising; `count` keeps only
   * the newest buckets.
   */
  async execute(query: AggregateQuery): Promise<ReadingBucket[]> {
    const range = toReadingRange(query);
    if (query.interval !== undefined && query.points !== undefined) {
      throw InvalidInputError.forField('interval', 'cannot be combined with points');
    }
    if (!wantsAggregation(query)) throw InvalidInputError.forField('interval', 'or points is required');
    const limit =
      query.count === undefined ? undefined : requireInteger(query.count, 'count', 1, MAX_READINGS_LIMIT);
    const now = this.clock.now().getTime();
    let bucketMs: number;
    if (query.interval === undefined) {
      const points = requireInteger(query.points, 'points', 1, MAX_BUCKETS);
      const end = range.endDate?.getTime() ?? now;
      const spanMs = end - (range.startDate?.getTime() ?? end - DEFAULT_AGGREGATE_WINDOW_MS);
      bucketMs = bucketForPoints(
        points,
        spanMs,
        (size) => bucketsIn(windowFor(range.startDate, range.endDate, size, now), size) <= points,
      );
    } else {
      bucketMs = parseInterval(query.interval);
    }
    const window = windowFor(range.startDate, range.endDate, bucketMs, now);
    if (window.start > window.end) return [];
    const buckets = bucketsIn(window, bucketMs);
    if (buckets > MAX_BUCKETS) {
      throw InvalidInputError.forField(
        'interval',
        `gives ${buckets} buckets between startDate and endDate, more than ${MAX_BUCKETS}: choose a longer interval or a shorter range`,
      );
    }
    const found = await this.readings.aggregate(
      { ...range, startDate: new Date(window.start), endDate: new Date(window.end) },
      bucketMs,
    );
    return limit === undefined ? found : found.slice(0, limit);
  }
}
