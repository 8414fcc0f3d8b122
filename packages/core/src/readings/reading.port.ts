import { type NewReading, type Reading, type ReadingBucket } from './reading.js';

/** Selects readings of one series; every bound is inclusive. */
export interface ReadingRange {
  readonly group: string;
  readonly topic: string;
  readonly startDate?: Date;
  readonly endDate?: Date;
  readonly minValue?: number;
  readonly maxValue?: number;
}

/** Readings of a group to remove: of one topic or of every topic, with times in [from, to] (inclusive). */
export interface ReadingSelection {
  readonly group: string;
  readonly topic?: string;
  readonly from: Date;
  readonly to: Date;
  /** At most this many readings go, the oldest first (retention deletes in small batches). */
  readonly limit?: number;
  /**
   * Summaries (rollups) are left as they are instead of corrected, so aggregates over whole hours or
   * minutes still count the removed readings until deleteSummariesBefore: retention keeps them longer.
   */
  readonly keepSummaries?: boolean;
}

/** Readings of a group to export: of one topic or of every topic, with times in [from, to] when given. */
export interface ReadingExportSelection {
  readonly group: string;
  readonly topic?: string;
  readonly from?: Date;
  readonly to?: Date;
}

/** Readings of some topics of a group with times in [from, to] (inclusive), for a scan in time order. */
export interface ReadingScan {
  readonly group: string;
  /** Equal times come in this order of topics. */
  readonly topics: readonly string[];
  readonly from: Date;
  readonly to: Date;
}

/** Where the previous page ended: its last reading's topic and time. */
export interface ReadingCursor {
  readonly topic: string;
  readonly time: Date;
}

export interface ReadingRepository {
  /**
   * Stores the readings. A reading whose (group, topic, time) is already stored is skipped, so a retried
   * delivery never duplicates. Answers how many were newly stored.
   */
  add(readings: readonly NewReading[]): Promise<number>;
  /** The reading with the greatest time of one series; must not scan the series. */
  latest(group: string, topic: string): Promise<Reading | undefined>;
  /** The latest reading of every topic of the group, one per topic, ordered by topic. */
  latestOfEveryTopic(group: string): Promise<Reading[]>;
  /** Readings in the range, newest first, at most `limit`. */
  newestFirst(range: ReadingRange, limit: number): Promise<Reading[]>;
  /** The reading with the smallest time in the range. */
  oldest(range: ReadingRange): Promise<Reading | undefined>;
  /**
   * Summaries of the readings in the range over buckets of `bucketMs` (a whole number of seconds) aligned to
   * the Unix epoch, so a bucket starts at a multiple of `bucketMs` (days at midnight UTC). Newest bucket
   * first; buckets without readings are left out. Value filters apply to the readings before they are
   * summarised.
   */
  aggregate(range: ReadingRange, bucketMs: number): Promise<ReadingBucket[]>;
  /**
   * Removes the selected readings and answers how many. Afterwards no read answers them: not latest, not
   * ranges, not aggregates (a store that keeps summaries corrects them), and the group's revision has changed
   * when any was removed.
   */
  deleteRange(selection: ReadingSelection): Promise<number>;
  /**
   * One page of the selected readings ordered by topic (in the store's own order of text), then time,
   * starting strictly after `after`; at most `limit`. Keyset paging: each page is an index seek per topic,
   * so a whole export takes constant memory and no page costs more than the first.
   */
  page(
    selection: ReadingExportSelection,
    after: ReadingCursor | undefined,
    limit: number,
  ): Promise<Reading[]>;
  /**
   * The scanned readings in time order (equal times in the order of `topics`), in pages of at most
   * `pageSize`. Each page is an index seek per topic, so a scan of months holds one page per topic in
   * memory, however many readings the range has (a backtest replays them so).
   */
  scanInTimeOrder(scan: ReadingScan, pageSize: number): AsyncIterable<readonly Reading[]>;
  /** Every group that holds readings (or once did), in any order. */
  groups(): Promise<string[]>;
  /**
   * Removes the group's summaries (rollups) that cover only times before `before`, and answers how many
   * records went; a store that keeps none answers 0. A store keeping summaries in pieces (MongoDB: chunks of
   * hours or days) keeps a piece that reaches past `before`. Call it only for times whose readings are gone:
   * summaries of whole hours stand in for their readings.
   */
  deleteSummariesBefore(group: string, before: Date): Promise<number>;
  /** How many distinct topics the group holds readings of. */
  countTopics(group: string): Promise<number>;
  /** Those of `topics` the group holds readings of, in any order; cheap for a few thousand names. */
  knownTopics(group: string, topics: readonly string[]): Promise<string[]>;
  /**
   * Opaque text that changes whenever a write changes what `latestOfEveryTopic` (or any read of the group)
   * answers; it may also change when nothing did. It never takes a value it had before, even across a restart
   * of a store that keeps nothing, so equal texts mean the group's readings are unchanged.
   */
  revision(group: string): Promise<string>;
}

export const READING_REPOSITORY = Symbol.for('hortus.ReadingRepository');
