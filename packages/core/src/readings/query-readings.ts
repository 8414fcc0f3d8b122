import { inject, injectable } from 'inversify';
import { InvalidInputError } from '../shared/errors.js';
import { optionalDateBound, optionalNumber, requireInteger, requireText } from '../shared/validation.js';
import { DEFAULT_READINGS_LIMIT, MAX_READINGS_LIMIT, type Reading, requireTopic } from './reading.js';
import { READING_REPOSITORY, type ReadingRange, type ReadingRepository } from './reading.port.js';

export interface ReadingQuery {
  readonly group: unknown;
  readonly topic: unknown;
  readonly startDate?: unknown;
  readonly endDate?: unknown;
  readonly minValue?: unknown;
  readonly maxValue?: unknown;
  readonly count?: unknown;
}

/**
 * Parses the filters shared by the range and hourly routes; every bound is inclusive. A date alone covers
 * its whole day (UTC): as endDate it means that day's last millisecond.
 */
export function toReadingRange(query: ReadingQuery): ReadingRange {
  const startDate = optionalDateBound(query.startDate, 'startDate', 'start');
  const endDate = optionalDateBound(query.endDate, 'endDate', 'end');
  const minValue = optionalNumber(query.minValue, 'minValue');
  const maxValue = optionalNumber(query.maxValue, 'maxValue');
  if (startDate !== undefined && endDate !== undefined && startDate > endDate) {
    throw InvalidInputError.forField('startDate', 'must not be after endDate');
  }
  if (minValue !== undefined && maxValue !== undefined && minValue > maxValue) {
    throw InvalidInputError.forField('minValue', 'must not be greater than maxValue');
  }
  return {
    group: requireText(query.group, 'group'),
    topic: requireTopic(query.topic),
    ...(startDate === undefined ? {} : { startDate }),
    ...(endDate === undefined ? {} : { endDate }),
    ...(minValue === undefined ? {} : { minValue }),
    ...(maxValue === undefined ? {} : { maxValue }),
  };
}

@injectable()
export class QueryReadings {
  constructor(@inject(READING_REPOSITORY) private readonly readings: ReadingRepository) {}

  /** Readings of one topic, newest first: `count` of them, or at most 1000 when no count is given. */
  async execute(query: ReadingQuery): Promise<Reading[]> {
    const range = toReadingRange(query);
    const limit =
      query.count === undefined
        ? DEFAULT_READINGS_LIMIT
        : requireInteger(query.count, 'count', 1, MAX_READINGS_LIMIT);
    return this.readings.newestFirst(range, limit);
  }
}
