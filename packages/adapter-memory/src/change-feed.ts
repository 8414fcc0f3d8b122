import { inject, injectable } from 'inversify';
import {
  ACTION_REPOSITORY,
  type ChangeFeed,
  GROUP_REPOSITORY,
  type GroupChanges,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
} from '@hortus/core';
import { type InMemoryActionRepository } from './action.repository.js';
import { type InMemoryGroupRepository } from './group.repository.js';
import { type InMemoryNotificationRepository } from './notification.repository.js';
import { type InMemoryReadingRepository } from './reading.repository.js';
import { type GroupRevisions } from './revisions.js';

/**
 * The change feed over the four repositories' counters. Its cursor holds each counter's epoch and position,
 * so a cursor from another store (or before a restart) is told apart and answered with a reset.
 */
@injectable()
export class InMemoryChangeFeed implements ChangeFeed {
  private readonly counters: readonly GroupRevisions[];

  constructor(
    // The memory module binds these tokens to the memory classes, whose counters the feed reads.
    @inject(READING_REPOSITORY) readings: InMemoryReadingRepository,
    @inject(ACTION_REPOSITORY) actions: InMemoryActionRepository,
    @inject(GROUP_REPOSITORY) groups: InMemoryGroupRepository,
    @inject(NOTIFICATION_REPOSITORY) notifications: InMemoryNotificationRepository,
  ) {
    this.counters = [readings.revisions, actions.revisions, groups.revisions, notifications.revisions];
  }

  async changesSince(cursor: string | undefined): Promise<GroupChanges> {
    const next = JSON.stringify(this.counters.map((counter) => [counter.epoch, counter.position]));
    const since = parse(cursor);
    if (
      since === undefined ||
      since.length !== this.counters.length ||
      this.counters.some((counter, index) => since[index]?.[0] !== counter.epoch)
    ) {
      return { groups: [], cursor: next, reset: true };
    }
    const groups = new Set<string>();
    this.counters.forEach((counter, index) => {
      for (const group of counter.changedSince(since[index]?.[1] ?? 0)) groups.add(group);
    });
    return { groups: [...groups], cursor: next, reset: false };
  }
}

function parse(cursor: string | undefined): [string, number][] | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(cursor);
    if (!Array.isArray(parsed)) return undefined;
    const pairs = parsed.filter(
      (pair): pair is [string, number] =>
        Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'number',
    );
    return pairs.length === parsed.length ? pairs : undefined;
  } catch {
    return undefined;
  }
}
