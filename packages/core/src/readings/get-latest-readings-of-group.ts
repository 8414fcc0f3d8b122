import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Reading } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';

@injectable()
export class GetLatestReadingsOfGroup {
  constructor(@inject(READING_REPOSITORY) private readonly readings: ReadingRepository) {}

  async execute(input: { group: unknown }): Promise<Reading[]> {
    return this.readings.latestOfEveryTopic(requireText(input.group, 'group'));
  }
}
