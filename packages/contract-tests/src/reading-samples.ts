import { type NewReading, type Reading } from '@hortus/core';
import { at } from './store.js';

// Shared by the ReadingRepository contract's files.

export const GROUP = 'greenhouse-a';
export const TOPIC = 'esp/air/temperature';

export function reading(offsetMs: number, value: number, topic = TOPIC, group = GROUP): NewReading {
  return { group, topic, value, time: at(offsetMs) };
}

/** Times and values only, in answer order: what most cases compare. */
export function samples(readings: readonly Reading[]): [number, number][] {
  return readings.map((found) => [found.time.getTime(), found.value]);
}
