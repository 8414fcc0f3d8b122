import { type NewReading, type Reading } from './reading.js';

/** Selects readings of one series; every bound is inclusive. */
export interface ReadingRange {
  readonly group: string;
  readonly topic: string;
  readonly startDate?: Date;
  readonly endDate?: Date;
  readonly minValue?: number;
  readonly maxValue?: number;
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
}

export const READING_REPOSITORY = Symbol.for('hortus.ReadingRepository');
