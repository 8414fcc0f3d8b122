import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError, isDomainError } from '../shared/errors.js';
import { MAX_READINGS_PER_BATCH, type NewReading, readingKey, toNewReading } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';

export interface RejectedReading {
  readonly index: number;
  readonly reason: string;
}

export interface RecordReadingsResult {
  /** Items that were valid; duplicates of stored readings count as accepted (the retry succeeded). */
  readonly accepted: number;
  /** Accepted items that were not stored before. */
  readonly stored: number;
  readonly rejected: readonly RejectedReading[];
}

@injectable()
export class RecordReadings {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Validates every item on its own: one bad item never sinks the rest of the batch. */
  async execute(items: readonly unknown[]): Promise<RecordReadingsResult> {
    if (items.length > MAX_READINGS_PER_BATCH) {
      throw InvalidInputError.forField('readings', `must hold at most ${MAX_READINGS_PER_BATCH} items`);
    }
    const now = this.clock.now();
    const valid = new Map<string, NewReading>();
    const rejected: RejectedReading[] = [];
    let accepted = 0;
    items.forEach((item, index) => {
      try {
        const reading = toNewReading(item, now);
        accepted += 1;
        valid.set(readingKey(reading), reading);
      } catch (error) {
        if (!isDomainError(error)) throw error;
        rejected.push({ index, reason: error.message });
      }
    });
    const stored = valid.size === 0 ? 0 : await this.readings.add([...valid.values()]);
    return { accepted, stored, rejected };
  }
}
