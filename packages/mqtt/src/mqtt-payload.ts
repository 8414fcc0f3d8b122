import { expandReadingItems, isPlainObject } from '@hortus/core';

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
