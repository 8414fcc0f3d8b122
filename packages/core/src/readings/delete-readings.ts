import { inject, injectable } from 'inversify';
import { InvalidInputError } from '../shared/errors.js';
import { requireDateBound, requireText } from '../shared/validation.js';
import { requireTopic } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';

export interface DeleteReadingsResult {
  readonly group: string;
  readonly topic?: string;
  readonly from: Date;
  readonly to: Date;
  readonly deleted: number;
}

/**
 * Removes a group's readings (of one topic, or of all) within a time span, such as a reading stamped years
 * ahead that hid the real ones. Both bounds are required, so no call can empty a group by omission; a date
 * alone covers its whole day (UTC).
 */
@injectable()
export class DeleteReadings {
  constructor(@inject(READING_REPOSITORY) private readonly readings: ReadingRepository) {}

  async execute(input: {
    group: unknown;
    topic?: unknown;
    from: unknown;
    to: unknown;
  }): Promise<DeleteReadingsResult> {
    const group = requireText(input.group, 'group');
    const topic = input.topic === undefined ? undefined : requireTopic(input.topic);
    const from = requireDateBound(input.from, 'from', 'start');
    const to = requireDateBound(input.to, 'to', 'end');
    if (from > to) throw InvalidInputError.forField('from', 'must not be after to');
    const deleted = await this.readings.deleteRange({
      group,
      from,
      to,
      ...(topic === undefined ? {} : { topic }),
    });
    return { group, ...(topic === undefined ? {} : { topic }), from, to, deleted };
  }
}
