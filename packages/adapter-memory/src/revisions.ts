import { randomBytes } from 'node:crypto';
import { injectable } from 'inversify';

/**
 * One store's journal of changed groups, in the order of their changes: what the change feed reads. Each
 * counted repository records its bumps here, so one position covers readings, actions, groups and
 * notifications together.
 */
@injectable()
export class MemoryChanges {
  /** Tells a cursor of this store from one of another (or of this process before a restart). */
  readonly epoch = randomBytes(6).toString('base64url');
  private sequence = 0;
  /** (position, group) of each change in order, so "changed since" costs what changed; compacted as it grows. */
  private journal: { position: number; group: string }[] = [];
  private readonly lastChange = new Map<string, number>();

  record(group: string): void {
    this.sequence += 1;
    this.journal.push({ position: this.sequence, group });
    this.lastChange.set(group, this.sequence);
    // Keeps each group's last change only, once the journal holds far more entries than groups.
    if (this.journal.length > 2 * this.lastChange.size + 1024) {
      this.journal = [...this.lastChange]
        .map(([name, position]) => ({ position, group: name }))
        .sort((a, b) => a.position - b.position);
    }
  }

  /** The latest change's position (0: none yet). */
  get position(): number {
    return this.sequence;
  }

  /** The groups changed after position `since`. */
  changedSince(since: number): Set<string> {
    let low = 0;
    let high = this.journal.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((this.journal[middle]?.position ?? 0) <= since) low = middle + 1;
      else high = middle;
    }
    const changed = new Set<string>();
    for (let index = low; index < this.journal.length; index += 1) {
      const entry = this.journal[index];
      if (entry !== undefined) changed.add(entry.group);
    }
    return changed;
  }
}

export const MEMORY_CHANGES = Symbol.for('hortus.memory.Changes');

/**
 * Change counters per group behind a repository's `revision()`. The random epoch keeps a restarted store,
 * which starts counting again, from ever answering a revision it answered before.
 */
export class GroupRevisions {
  private readonly epoch = randomBytes(6).toString('base64url');
  private readonly counters = new Map<string, number>();

  constructor(private readonly changes: MemoryChanges) {}

  bump(group: string): void {
    this.counters.set(group, (this.counters.get(group) ?? 0) + 1);
    this.changes.record(group);
  }

  /** Every group that was ever bumped, with its current text. */
  all(): Map<string, string> {
    return new Map([...this.counters.keys()].map((group) => [group, this.current(group)]));
  }

  current(group: string): string {
    return `${this.epoch}.${this.counters.get(group) ?? 0}`;
  }
}
