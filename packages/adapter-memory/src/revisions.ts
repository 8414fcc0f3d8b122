import { randomBytes } from 'node:crypto';

/**
 * Change counters per group behind a repository's `revision()`. The random epoch keeps a restarted store,
 * which starts counting again, from ever answering a revision it answered before.
 */
export class GroupRevisions {
  private readonly epoch = randomBytes(6).toString('base64url');
  private readonly counters = new Map<string, number>();

  bump(group: string): void {
    this.counters.set(group, (this.counters.get(group) ?? 0) + 1);
  }

  /** Every group that was ever bumped, with its current text. */
  all(): Map<string, string> {
    return new Map([...this.counters.keys()].map((group) => [group, this.current(group)]));
  }

  current(group: string): string {
    return `${this.epoch}.${this.counters.get(group) ?? 0}`;
  }
}
