import { injectable } from 'inversify';
import { type NewReading, type Reading, type ReadingRange, type ReadingRepository } from '@hortus/core';
import { newId } from './ids.js';
import { compareText, lowerBound } from './sorted.js';

interface StoredReading {
  readonly id: string;
  readonly group: string;
  readonly topic: string;
  readonly value: number;
  readonly timeMs: number;
}

const timeOf = (reading: StoredReading): number => reading.timeMs;

function toReading(stored: StoredReading): Reading {
  return {
    id: stored.id,
    group: stored.group,
    topic: stored.topic,
    value: stored.value,
    time: new Date(stored.timeMs),
  };
}

function fromNewReading(reading: NewReading): StoredReading {
  return {
    id: newId(),
    group: reading.group,
    topic: reading.topic,
    value: Number(reading.value),
    timeMs: reading.time.getTime(),
  };
}

/**
 * Readings kept per series (group + topic) in arrays sorted by time: range bounds are binary searches,
 * the latest reading is the last element, and a (group, topic, time) duplicate sits at the insert position.
 */
@injectable()
export class InMemoryReadingRepository implements ReadingRepository {
  private readonly seriesByGroup = new Map<string, Map<string, StoredReading[]>>();

  async add(readings: readonly NewReading[]): Promise<number> {
    let stored = 0;
    for (const reading of readings) {
      const series = this.seriesFor(reading.group, reading.topic);
      const timeMs = reading.time.getTime();
      const position = lowerBound(series, timeMs, timeOf);
      if (series[position]?.timeMs === timeMs) continue;
      // Clocks deliver in order almost always, so this is nearly always an O(1) append.
      if (position === series.length) series.push(fromNewReading(reading));
      else series.splice(position, 0, fromNewReading(reading));
      stored += 1;
    }
    return stored;
  }

  async latest(group: string, topic: string): Promise<Reading | undefined> {
    const last = this.seriesByGroup.get(group)?.get(topic)?.at(-1);
    return last === undefined ? undefined : toReading(last);
  }

  async latestOfEveryTopic(group: string): Promise<Reading[]> {
    const topics = this.seriesByGroup.get(group);
    if (topics === undefined) return [];
    return [...topics.entries()]
      .sort(([a], [b]) => compareText(a, b))
      .flatMap(([, series]) => {
        const last = series.at(-1);
        return last === undefined ? [] : [toReading(last)];
      });
  }

  async newestFirst(range: ReadingRange, limit: number): Promise<Reading[]> {
    const { series, first, last } = this.bounds(range);
    const found: Reading[] = [];
    for (let index = last; index >= first && found.length < limit; index -= 1) {
      const reading = series[index] as StoredReading;
      if (inValueRange(reading.value, range)) found.push(toReading(reading));
    }
    return found;
  }

  async oldest(range: ReadingRange): Promise<Reading | undefined> {
    const { series, first, last } = this.bounds(range);
    for (let index = first; index <= last; index += 1) {
      const reading = series[index] as StoredReading;
      if (inValueRange(reading.value, range)) return toReading(reading);
    }
    return undefined;
  }

  private seriesFor(group: string, topic: string): StoredReading[] {
    let topics = this.seriesByGroup.get(group);
    if (topics === undefined) {
      topics = new Map();
      this.seriesByGroup.set(group, topics);
    }
    let series = topics.get(topic);
    if (series === undefined) {
      series = [];
      topics.set(topic, series);
    }
    return series;
  }

  /** Inclusive index bounds of the range's time window; `last < first` when it is empty. */
  private bounds(range: ReadingRange): { series: readonly StoredReading[]; first: number; last: number } {
    const series = this.seriesByGroup.get(range.group)?.get(range.topic) ?? [];
    const first = range.startDate === undefined ? 0 : lowerBound(series, range.startDate.getTime(), timeOf);
    const last =
      range.endDate === undefined
        ? series.length - 1
        : lowerBound(series, range.endDate.getTime(), timeOf, true) - 1;
    return { series, first, last };
  }
}

function inValueRange(value: number, range: ReadingRange): boolean {
  return (
    (range.minValue === undefined || value >= range.minValue) &&
    (range.maxValue === undefined || value <= range.maxValue)
  );
}
