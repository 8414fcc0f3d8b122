import { InvalidInputError } from '../shared/errors.js';
import { DERIVED_TOPIC_PREFIX, isDerivedTopic } from './topics.js';
import { isPlainObject, optionalDate, requireNumber, requireText } from '../shared/validation.js';

export interface Reading {
  readonly id: string;
  readonly group: string;
  readonly topic: string;
  readonly value: number;
  readonly time: Date;
}

export type NewReading = Omit<Reading, 'id'>;

/** The readings of one series within one time bucket, summarised. */
export interface ReadingBucket {
  /** Start of the bucket. */
  readonly time: Date;
  readonly min: number;
  readonly max: number;
  readonly avg: number;
  readonly count: number;
}

/** MQTT-style topics of the six sensors of docs/api.md (Sensor data); boxes publish further topics under `esp/`. */
export const sensorTopics = {
  temperature: 'esp/air/temperature',
  humidity: 'esp/air/humidity',
  lux: 'esp/ground/light/lux',
  moisture1: 'esp/ground/moisture/1',
  moisture2: 'esp/ground/moisture/2',
  moisture3: 'esp/ground/moisture/3',
} as const;

export type SensorName = keyof typeof sensorTopics;

/** Answer size of a range query when the client names no count (the original service's behaviour, docs/api.md). */
export const DEFAULT_READINGS_LIMIT = 1000;
/** Hard ceiling on `count`: clients ask for up to 4000; more than this is a 400, not a slow answer. */
export const MAX_READINGS_LIMIT = 10_000;
/** Largest batch one ingest call may carry. */
export const MAX_READINGS_PER_BATCH = 5000;
export const TOPIC_MAX_LENGTH = 200;

// Wildcards would make a stored topic match other subscriptions; NUL breaks keys.
const topicPattern = /^[^#+\p{Cc}]+$/u;

export function requireTopic(value: unknown): string {
  const topic = requireText(value, 'topic', TOPIC_MAX_LENGTH);
  if (!topicPattern.test(topic))
    throw InvalidInputError.forField('topic', 'must not contain MQTT wildcards or control characters');
  return topic;
}

/** Turns one untrusted ingest item into a reading, or throws InvalidInputError naming the bad field. */
export function toNewReading(item: unknown, now: Date): NewReading {
  if (!isPlainObject(item)) throw new InvalidInputError('a reading must be an object');
  const group = requireText(item['group'], 'group');
  const topic = requireTopic(item['topic']);
  // Only the engine writes derived series (docs/metrics.md): no box or client may forge one.
  if (isDerivedTopic(topic))
    throw InvalidInputError.forField('topic', `is under ${DERIVED_TOPIC_PREFIX}, which only Hortus derives`);
  return {
    group,
    topic,
    value: requireNumber(item['value'], 'value'),
    time: optionalDate(item['time'], 'time') ?? now,
  };
}

/** Keys readings so a retried delivery of the same sample is recognised. */
export function readingKey(reading: Pick<Reading, 'group' | 'topic' | 'time'>): string {
  return `${reading.group}\u0000${reading.topic}\u0000${reading.time.getTime()}`;
}
