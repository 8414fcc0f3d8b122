import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject } from '../shared/validation.js';
import { MAX_READINGS_PER_BATCH } from './reading.js';

/**
 * Expands what a box may send into one item per reading, leaving each item's validation to
 * RecordReadings so one bad item never sinks the batch. Accepted: one reading `{group, topic, value, time?}`,
 * the compact form `{group, time?, values: {<topic>: <number>}}`, or an array of either.
 */
export function expandReadingItems(body: unknown): unknown[] {
  const items = Array.isArray(body) ? body : [body];
  if (items.length > MAX_READINGS_PER_BATCH) {
    throw InvalidInputError.forField('readings', `must hold at most ${MAX_READINGS_PER_BATCH} items`);
  }
  const expanded = items.flatMap((item: unknown) => {
    if (!isPlainObject(item) || !isPlainObject(item['values'])) return [item];
    const { values, ...common } = item;
    return Object.entries(values).map(([topic, value]) => ({ ...common, topic, value }));
  });
  if (expanded.length > MAX_READINGS_PER_BATCH) {
    throw InvalidInputError.forField('readings', `must hold at most ${MAX_READINGS_PER_BATCH} readings`);
  }
  return expanded;
}

/**
 * Reads one MQTT message. The legacy firmware publishes the text `<value>,<group>` on the sensor's topic;
 * newer boxes publish JSON: `{group, value, time?}` on the sensor's topic, or the compact form.
 * Answers undefined for a payload in neither format.
 */
export function readingItemsFromMqtt(topic: string, payload: string): unknown[] | undefined {
  const text = payload.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    const withTopic = (item: unknown): unknown =>
      isPlainObject(item) && item['topic'] === undefined && item['values'] === undefined
        ? { ...item, topic }
        : item;
    return expandReadingItems(Array.isArray(parsed) ? parsed.map(withTopic) : withTopic(parsed));
  }
  const comma = text.indexOf(',');
  if (comma <= 0) return undefined;
  return [{ topic, value: text.slice(0, comma).trim(), group: text.slice(comma + 1).trim() }];
}
