import { inject, injectable } from 'inversify';
import { type ChangeFeed, type GroupChanges } from '@hortus/core';
import { MEMORY_CHANGES, MemoryChanges } from './revisions.js';

/**
 * The change feed over the store's journal (MemoryChanges). Its cursor holds the journal's epoch and
 * position, so a cursor of another store, or from before a restart, is told apart and answered with a reset.
 */
@injectable()
export class InMemoryChangeFeed implements ChangeFeed {
  constructor(@inject(MEMORY_CHANGES) private readonly changes: MemoryChanges = new MemoryChanges()) {}

  async changesSince(cursor: string | undefined): Promise<GroupChanges> {
    const { epoch, position } = this.changes;
    const next = `${epoch}:${position}`;
    const [cursorEpoch, cursorPosition] = cursor?.split(':') ?? [];
    const since = Number(cursorPosition);
    if (cursorEpoch !== epoch || !Number.isSafeInteger(since) || since < 0 || since > position) {
      return { groups: [], cursor: next, reset: true };
    }
    return { groups: [...this.changes.changedSince(since)], cursor: next, reset: false };
  }
}
