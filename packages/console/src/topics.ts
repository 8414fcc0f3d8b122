// Names and units come from core's one list (knownTopics), imported as a file: core's index would bring
// inversify and reflect-metadata into the bundle, and topics.ts imports nothing.
import { derivedTopics, nameOfTopic, unitOfTopic, withUnit } from '../../core/src/readings/topics.js';

export { derivedTopics, nameOfTopic, unitOfTopic, withUnit };

/** A reading's value as people read it: with its topic's unit when it is a number ("18.88 °C"). */
export const valueText = (value: number | string, topic: string): string =>
  typeof value === 'number' ? withUnit(value, topic) : value;
