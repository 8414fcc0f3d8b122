import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError, isDomainError } from '../shared/errors.js';
import { MAX_READINGS_PER_BATCH, type NewReading, readingKey, toNewReading } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';
import { CORE_LIMITS, type CoreLimits } from '../shared/settings.js';

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
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
  ) {}

  /**
   * Validates every item on its own: one bad item never sinks the rest of the batch. A reading stamped
   * further ahead of the server's clock than the allowed skew is refused: it would stay the newest reading
   * of its series for years, hiding every real one and driving rules and alerts. With `allOrNothing`, one
   * refused item means nothing is stored.
   */
  async execute(
    items: readonly unknown[],
    options: { readonly allOrNothing?: boolean } = {},
  ): Promise<RecordReadingsResult> {
    if (items.length > MAX_READINGS_PER_BATCH) {
      throw InvalidInputError.forField('readings', `must hold at most ${MAX_READINGS_PER_BATCH} items`);
    }
    const now = this.clock.now();
    const latestAllowed = now.getTime() + this.limits.maxClockSkewMs;
    const candidates: { index: number; reading: NewReading }[] = [];
    const rejected: RejectedReading[] = [];
    items.forEach((item, index) => {
      try {
        const reading = toNewReading(item, now);
        if (reading.time.getTime() > latestAllowed) {
          throw InvalidInputError.forField(
            'time',
            `is more than ${Math.round(this.limits.maxClockSkewMs / 1000)} s ahead of the server's clock`,
          );
        }
        candidates.push({ index, reading });
      } catch (error) {
        if (!isDomainError(error)) throw error;
        rejected.push({ index, reason: error.message });
      }
    });
    const refused = await this.topicsBeyondQuota(candidates.map(({ reading }) => reading));
    const valid = new Map<string, NewReading>();
    let accepted = 0;
    for (const { index, reading } of candidates) {
      const reason = refused.get(topicKey(reading));
      if (reason === undefined) {
        accepted += 1;
        valid.set(readingKey(reading), reading);
      } else {
        rejected.push({ index, reason });
      }
    }
    if (refused.size > 0) rejected.sort((a, b) => a.index - b.index);
    // A sender that cannot tell which items were refused (a box's insertMany) gets all or nothing.
    if (options.allOrNothing === true && rejected.length > 0) return { accepted: 0, stored: 0, rejected };
    const stored = valid.size === 0 ? 0 : await this.readings.add([...valid.values()]);
    return { accepted, stored, rejected };
  }

  /**
   * Topics of the batch that a group does not hold yet and has no room for (MAX_TOPICS_PER_GROUP), with the
   * reason their readings are refused. New topics take the free places in the order the batch brings them.
   * Two batches arriving at once may each take the last places: the cap can be passed by one batch at most.
   */
  private async topicsBeyondQuota(readings: readonly NewReading[]): Promise<Map<string, string>> {
    const topicsByGroup = new Map<string, Set<string>>();
    for (const { group, topic } of readings) {
      let topics = topicsByGroup.get(group);
      if (topics === undefined) topicsByGroup.set(group, (topics = new Set()));
      topics.add(topic);
    }
    const refused = new Map<string, string>();
    const cap = this.limits.maxTopicsPerGroup;
    for (const [group, topics] of topicsByGroup) {
      const known = new Set(await this.readings.knownTopics(group, [...topics]));
      const fresh = [...topics].filter((topic) => !known.has(topic));
      if (fresh.length === 0) continue;
      const room = Math.max(0, cap - (await this.readings.countTopics(group)));
      for (const topic of fresh.slice(room)) {
        refused.set(
          topicKey({ group, topic }),
          `topic is new and group ${group} already holds ${cap} topics, the most allowed`,
        );
      }
    }
    return refused;
  }
}

function topicKey({ group, topic }: Pick<NewReading, 'group' | 'topic'>): string {
  return `${group}\u0000${topic}`;
}
