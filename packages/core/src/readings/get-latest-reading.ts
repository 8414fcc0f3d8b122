import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Reading, requireTopic } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';

@injectable()
export class GetLatestReading {
  constructor(@inject(READING_REPOSITORY) private readonly readings: ReadingRepository) {}

  /** The newest reading of one topic as a list of zero or one, the shape clients expect. */
  async execute(input: { group: unknown; topic: unknown }): Promise<Reading[]> {
    const latest = await this.readings.latest(requireText(input.group, 'group'), requireTopic(input.topic));
    return latest === undefined ? [] : [latest];
  }
}
