import { randomBytes } from 'node:crypto';

/**
 * Change counters per group behind a repository's `revision()`. The random epoch keeps a restarted store,
 * which starts counting again, from ever answering a revision it answered before.
 */
export class GroupRevisions {
  readonly epoch = randomBytes(6).toString('base64url');
  private readonly counters = new Map<string, number>();
  /** Counts every bump of this repository: the position the change feed reads from. */
  private sequence = 0;
  /** (sequence, group) of each bump in order, so "changed since" costs what changed; compacted as it grows. */
  private journal: { sequence: number; group: string }[] = [];
  private readonly lastBump = new Map<string, number>();

  bump(group: string): void {
    this.counters.set(group, (this.counters.get(group) ?? 0) + 1);
    this.sequence += 1;
    this.journal.push({ sequence: this.sequence, group });
    this.lastBump.set(group, this.sequence);
    // Keeps each group's last bump only, once the journal holds far more entries than groups.
    if (this.journal.length > 2 * this.lastBump.size + 1024) {
      this.journal = [...this.lastBump]
        .map(([name, sequence]) => ({ sequence, group: name }))
        .sort((a, b) => a.sequence - b.sequence);
    }
  }

  /** The latest bump's position (0: none yet). */
  get position(): number {
    return this.sequence;
  }

  /** The groups bumped after position `since`. */
  changedSince(since: number): Set<string> {
    const changed = new Set<string>();
    let low = 0;
    let high = this.journal.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((this.journal[middle]?.sequence ?? 0) <= since) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < this.journal.length; index += 1) {
      const entry = this.journal[index];
      if (entry !== undefined) changed.add(entry.group);
    }
    return changed;
  }

  /** Every group that was ever bumped, with its current text. */
  all(): Map<string, string> {
    return new Map([...this.counters.keys()].map((group) => [group, this.current(group)]));
  }

  current(group: string): string {
    return `${this.epoch}.${this.counters.get(group) ?? 0}`;
  }
}
