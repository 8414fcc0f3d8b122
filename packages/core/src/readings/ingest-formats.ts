import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject } from '../shared/validation.js';
import { MAX_READINGS_PER_BATCH } from './reading.js';

/** One reading of an ingest body, with the item of the body it came from. */
export interface ExpandedReading {
  readonly reading: unknown;
  /** Position of the item in the body (0 for a single object). */
  readonly item: number;
  /** The topic, when the item is in the compact form (one item, several readings). */
  readonly compactTopic?: string;
}

/**
 * Expands what a box may send into one item per reading, leaving each item's validation to
 * RecordReadings so one bad item never sinks the batch. Accepted: one reading `{group, topic, value, time?}`,
 * the compact form `{group, time?, values: {<topic>: <number>}}`, or an array of either. Each reading
 * remembers its item, so a transport can report rejections in the terms of the body the box sent.
 */
export function expandReadingItemsWithOrigin(body: unknown): ExpandedReading[] {
  const items = Array.isArray(body) ? body : [body];
  if (items.length > MAX_READINGS_PER_BATCH) {
    throw InvalidInputError.forField('readings', `must hold at most ${MAX_READINGS_PER_BATCH} items`);
  }
  const expanded = items.flatMap((item: unknown, index): ExpandedReading[] => {
    if (!isPlainObject(item) || !isPlainObject(item['values'])) return [{ reading: item, item: index }];
    const { values, ...common } = item;
    return Object.entries(values).map(([topic, value]) => ({
      reading: { ...common, topic, value },
      item: index,
      compactTopic: topic,
    }));
  });
  if (expanded.length > MAX_READINGS_PER_BATCH) {
    throw InvalidInputError.forField('readings', `must hold at most ${MAX_READINGS_PER_BATCH} readings`);
  }
  return expanded;
}

/** The readings of an ingest body, without their origins (see expandReadingItemsWithOrigin). */
export function expandReadingItems(body: unknown): unknown[] {
  return expandReadingItemsWithOrigin(body).map(({ reading }) => reading);
}
