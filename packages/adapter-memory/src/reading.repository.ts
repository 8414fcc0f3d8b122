import { inject, injectable } from 'inversify';
import {
  mergeInTimeOrder,
  type ReadingScan,
  BucketSums,
  type NewReading,
  type Reading,
  type ReadingBucket,
  type ReadingRange,
  type ReadingRepository,
  type ReadingCursor,
  type ReadingExportSelection,
  type ReadingSelection,
} from '@hortus/core';
import { GroupRevisions, MEMORY_CHANGES, MemoryChanges } from './revisions.js';
import { compareText } from './sorted.js';

/** Offset that makes every valid Date's milliseconds non-negative, so ids stay fixed-width hex. */
const TIME_OFFSET = 8.64e15;
let seriesCount = 0;

/**
 * One series (group + topic) in two parallel typed arrays sorted by time: 16 bytes a reading instead of
 * an object each, so ten million readings fit in well under 400 MB of heap. Times are unique within a
 * series (a retried delivery is a duplicate), so a reading's id is the series tag plus its time.
 */
class Series {
  times = new Float64Array(8);
  values = new Float64Array(8);
  length = 0;
  private readonly tag = (seriesCount++).toString(16).padStart(10, '0');

  constructor(
    readonly group: string,
    readonly topic: string,
  ) {}

  /** Index of the first reading at or after `timeMs` (strictly after when `after`). */
  lowerBound(timeMs: number, after = false): number {
    let low = 0;
    let high = this.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const candidate = this.times[middle] as number;
      if (candidate < timeMs || (after && candidate === timeMs)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Inserts unless a reading with that time exists; answers whether it did. */
  insert(timeMs: number, value: number): boolean {
    // Boxes deliver in time order almost always, so this is nearly always an append.
    const position =
      this.length === 0 || timeMs > (this.times[this.length - 1] as number)
        ? this.length
        : this.lowerBound(timeMs);
    if (position < this.length && this.times[position] === timeMs) return false;
    if (this.length === this.times.length) this.grow();
    if (position < this.length) {
      this.times.copyWithin(position + 1, position, this.length);
      this.values.copyWithin(position + 1, position, this.length);
    }
    this.times[position] = timeMs;
    this.values[position] = value;
    this.length += 1;
    return true;
  }

  /** Removes the readings with times in [fromMs, toMs], at most `limit`, the oldest first; answers how many. */
  removeRange(fromMs: number, toMs: number, limit = Number.POSITIVE_INFINITY): number {
    const first = this.lowerBound(fromMs);
    const end = Math.min(this.lowerBound(toMs, true), first + limit);
    const removed = Math.max(0, end - first);
    if (removed === 0) return 0;
    this.times.copyWithin(first, end, this.length);
    this.values.copyWithin(first, end, this.length);
    this.length -= removed;
    return removed;
  }

  reading(index: number): Reading {
    const timeMs = this.times[index] as number;
    return {
      id: this.tag + (timeMs + TIME_OFFSET).toString(16).padStart(14, '0'),
      group: this.group,
      topic: this.topic,
      value: this.values[index] as number,
      time: new Date(timeMs),
    };
  }

  private grow(): void {
    // 1.5x keeps the unused tail of large series small.
    const capacity = Math.ceil(this.times.length * 1.5);
    const times = new Float64Array(capacity);
    const values = new Float64Array(capacity);
    times.set(this.times.subarray(0, this.length));
    values.set(this.values.subarray(0, this.length));
    this.times = times;
    this.values = values;
  }
}

/**
 * Readings kept per series in time-sorted columns: range bounds are binary searches, the latest reading is
 * the last element, and a (group, topic, time) duplicate sits at the insert position.
 */
@injectable()
export class InMemoryReadingRepository implements ReadingRepository {
  private readonly seriesByGroup = new Map<string, Map<string, Series>>();
  private readonly revisions: GroupRevisions;

  /** `changes`: the store's journal the change feed reads; shared by the store's four counted repositories. */
  constructor(@inject(MEMORY_CHANGES) changes: MemoryChanges = new MemoryChanges()) {
    this.revisions = new GroupRevisions(changes);
  }

  async add(readings: readonly NewReading[]): Promise<number> {
    let stored = 0;
    let changedGroup: string | undefined;
    for (const reading of readings) {
      if (
        this.seriesFor(reading.group, reading.topic).insert(reading.time.getTime(), Number(reading.value))
      ) {
        stored += 1;
        // Batches nearly always hold one group: bump once per run of it rather than once per reading.
        if (reading.group !== changedGroup) {
          changedGroup = reading.group;
          this.revisions.bump(changedGroup);
        }
      }
    }
    return stored;
  }

  async revision(group: string): Promise<string> {
    return this.revisions.current(group);
  }

  async latest(group: string, topic: string): Promise<Reading | undefined> {
    const series = this.seriesByGroup.get(group)?.get(topic);
    return series === undefined || series.length === 0 ? undefined : series.reading(series.length - 1);
  }

  async latestOfEveryTopic(group: string): Promise<Reading[]> {
    const topics = this.seriesByGroup.get(group);
    if (topics === undefined) return [];
    return [...topics.values()]
      .filter((series) => series.length > 0)
      .sort((a, b) => compareText(a.topic, b.topic))
      .map((series) => series.reading(series.length - 1));
  }

  async newestFirst(range: ReadingRange, limit: number): Promise<Reading[]> {
    const found: Reading[] = [];
    const bounds = this.bounds(range);
    if (bounds === undefined) return found;
    const { series, first, last } = bounds;
    for (let index = last; index >= first && found.length < limit; index -= 1) {
      if (inValueRange(series.values[index] as number, range)) found.push(series.reading(index));
    }
    return found;
  }

  async oldest(range: ReadingRange): Promise<Reading | undefined> {
    const bounds = this.bounds(range);
    if (bounds === undefined) return undefined;
    const { series, first, last } = bounds;
    for (let index = first; index <= last; index += 1) {
      if (inValueRange(series.values[index] as number, range)) return series.reading(index);
    }
    return undefined;
  }

  /** One pass over the columns between the range's binary-searched bounds, summed by core's BucketSums. */
  async aggregate(range: ReadingRange, bucketMs: number): Promise<ReadingBucket[]> {
    const bounds = this.bounds(range);
    if (bounds === undefined) return [];
    const { series, first, last } = bounds;
    const { times, values } = series;
    const sums = new BucketSums(bucketMs);
    for (let index = last; index >= first; index -= 1) {
      const value = values[index] as number;
      if (inValueRange(value, range)) sums.addValue(times[index] as number, value);
    }
    return sums.newestFirst();
  }

  /** The merge of one time-ordered page per topic: see the port. */
  scanInTimeOrder(scan: ReadingScan, pageSize: number): AsyncIterable<readonly Reading[]> {
    return mergeInTimeOrder(scan, pageSize, (topic, fromMs, toMs, limit) =>
      this.page({ group: scan.group, topic, from: new Date(fromMs), to: new Date(toMs) }, undefined, limit),
    );
  }

  async groups(): Promise<string[]> {
    return [...this.seriesByGroup.keys()];
  }

  /** Summaries are computed from the readings on every read: there are none to delete. */
  async deleteSummariesBefore(): Promise<number> {
    return 0;
  }

  async deleteRange({ group, topic, from, to, limit }: ReadingSelection): Promise<number> {
    const topics = this.seriesByGroup.get(group);
    if (topics === undefined) return 0;
    const chosen = topic === undefined ? [...topics.values()] : [topics.get(topic)];
    let removed = 0;
    for (const series of chosen) {
      if (series === undefined) continue;
      removed += series.removeRange(from.getTime(), to.getTime(), (limit ?? Infinity) - removed);
      // A topic without readings is no topic of the group any more (it no longer counts against its quota).
      if (series.length === 0) topics.delete(series.topic);
    }
    if (topics.size === 0) this.seriesByGroup.delete(group);
    if (removed > 0) this.revisions.bump(group);
    return removed;
  }

  async page(
    { group, topic, from, to }: ReadingExportSelection,
    after: ReadingCursor | undefined,
    limit: number,
  ): Promise<Reading[]> {
    const found: Reading[] = [];
    const topics = this.seriesByGroup.get(group);
    if (topics === undefined || !(limit > 0)) return found;
    const names = (topic === undefined ? [...topics.keys()] : [topic]).sort(compareText);
    for (const name of names) {
      if (after !== undefined && compareText(name, after.topic) < 0) continue;
      const resume = after !== undefined && name === after.topic ? after.time.getTime() + 1 : undefined;
      const start = Math.max(resume ?? Number.NEGATIVE_INFINITY, from?.getTime() ?? Number.NEGATIVE_INFINITY);
      const bounds = this.bounds({
        group,
        topic: name,
        ...(Number.isFinite(start) ? { startDate: new Date(start) } : {}),
        ...(to === undefined ? {} : { endDate: to }),
      });
      if (bounds === undefined) continue;
      for (let index = bounds.first; index <= bounds.last; index += 1) {
        found.push(bounds.series.reading(index));
        if (found.length >= limit) return found;
      }
    }
    return found;
  }

  async countTopics(group: string): Promise<number> {
    return this.seriesByGroup.get(group)?.size ?? 0;
  }

  async knownTopics(group: string, topics: readonly string[]): Promise<string[]> {
    const stored = this.seriesByGroup.get(group);
    return stored === undefined ? [] : topics.filter((topic) => stored.has(topic));
  }

  private seriesFor(group: string, topic: string): Series {
    let topics = this.seriesByGroup.get(group);
    if (topics === undefined) {
      topics = new Map();
      this.seriesByGroup.set(group, topics);
    }
    let series = topics.get(topic);
    if (series === undefined) {
      series = new Series(group, topic);
      topics.set(topic, series);
    }
    return series;
  }

  /** Inclusive index bounds of the range's time window; `last < first` when it is empty. */
  private bounds(range: ReadingRange): { series: Series; first: number; last: number } | undefined {
    const series = this.seriesByGroup.get(range.group)?.get(range.topic);
    if (series === undefined) return undefined;
    const first = range.startDate === undefined ? 0 : series.lowerBound(range.startDate.getTime());
    const last =
      range.endDate === undefined ? series.length - 1 : series.lowerBound(range.endDate.getTime(), true) - 1;
    return { series, first, last };
  }
}

function inValueRange(value: number, range: ReadingRange): boolean {
  return (
    (range.minValue === undefined || value >= range.minValue) &&
    (range.maxValue === undefined || value <= range.maxValue)
  );
}
