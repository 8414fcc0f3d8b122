import { type SqliteConnection } from './support.js';

interface Waiting {
  readonly work: (commit: number) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: writes that arrive while the event loop is busy (many boxes posting one reading each) are
 * committed by one transaction instead of one each. With synchronous=FULL every COMMIT waits for the disk,
 * so one commit for a few dozen requests is what lets single-reading inserts scale.
 *
 * Each write runs in a savepoint of its own, so one that fails is rolled back alone and only its caller
 * sees the error; every caller is answered only after the COMMIT, so what was acknowledged survives a
 * crash. `afterCommit` runs with the results of the writes that succeeded, once they are durable.
 */
export class GroupCommit {
  private waiting: Waiting[] = [];
  private scheduled = false;
  /** Counts the commits: a work is told which one it is part of, to share what it learns with the others. */
  private commits = 0;

  constructor(private readonly connection: SqliteConnection) {}

  run<T>(work: (commit: number) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn: every request that arrived with them joins this commit.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const group = this.waiting;
    this.waiting = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    this.commits += 1;
    const commit = this.commits;
    try {
      this.connection.write(() => {
        for (const { work } of group) {
          try {
            // Nested in the open transaction, write() is a savepoint: a failure takes back this work only.
            outcomes.push({ ok: true, value: this.connection.write(() => work(commit)) });
          } catch (error) {
            // Some failures (a full disk, I/O errors) make SQLite roll back the whole transaction: then
            // nothing of the group is stored, and every caller is told why.
            if (!this.connection.database.inTransaction) throw error;
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // BEGIN or COMMIT failed (busy, disk full, closed), or SQLite rolled back: nothing of the group is stored.
      for (const { reject } of group) reject(error);
      return;
    }
    group.forEach(({ resolve, reject }, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok === true) resolve(outcome.value);
      else reject(outcome?.error);
    });
  }
}
