import { type RevisionSubject } from '@hortus/core';
import { DATA_VERSION_TRUSTED_MS, type RevisionCache } from './revision-cache.js';
import { type SqliteConnection } from './support.js';

/** Plenty for every polled group; past it the cache starts again rather than growing. */
const MAX_CACHED_REVISIONS = 50_000;

/**
 * Per-group change counters in the database file, so every process on the file (the server, the CLI) sees
 * every change: a revision read is one lookup by primary key, kept by the handle while no other
 * connection committed (RevisionCache).
 */
export class SqliteRevisions {
  constructor(
    private readonly connection: SqliteConnection,
    private readonly subject: RevisionSubject,
  ) {}

  current(group: string): string {
    const cache = this.cache();
    const key = `${this.subject}\u0000${group}`;
    const cached = cache.texts.get(key);
    if (cached !== undefined) return cached;
    const row = this.connection
      .prepare('SELECT epoch, n FROM revisions WHERE subject = ? AND grp = ?')
      .get(this.subject, group) as { epoch: string; n: number } | undefined;
    const text = row === undefined ? '0' : `${row.epoch}.${row.n}`;
    // Inside a write transaction the text may be rolled back: not kept.
    if (this.connection.database.inTransaction) return text;
    if (cache.texts.size >= MAX_CACHED_REVISIONS) cache.texts.clear();
    cache.texts.set(key, text);
    return text;
  }

  /**
   * The handle's cache, emptied when another connection committed since the last look; a look less than
   * DATA_VERSION_TRUSTED_MS old is not repeated.
   */
  private cache(): RevisionCache {
    const cache = this.connection.revisionCache;
    // Taken before asking: a commit while the pragma runs is then looked for again in time.
    const now = performance.now();
    if (now - cache.checkedAt < DATA_VERSION_TRUSTED_MS) return cache;
    const dataVersion: unknown = this.connection.prepare('PRAGMA data_version').pluck().get();
    if (cache.dataVersion !== dataVersion) {
      cache.dataVersion = dataVersion;
      cache.texts.clear();
    }
    cache.checkedAt = now;
    return cache;
  }

  /** Every group with a counter of this subject, with its current text. */
  all(): Map<string, string> {
    const rows = this.connection
      .prepare('SELECT grp, epoch, n FROM revisions WHERE subject = ?')
      .all(this.subject) as { grp: string; epoch: string; n: number }[];
    return new Map(rows.map(({ grp, epoch, n }) => [grp, `${epoch}.${n}`]));
  }

  /**
   * Call inside the write transaction it follows, so the revision changes exactly when the data does. The
   * random epoch, set when a counter's row is created, keeps a new file from repeating an old file's texts.
   */
  bump(groups: Iterable<string>): void {
    // seq: the next number of the table, taken inside the write, which SQLite serialises across processes:
    // numbers are thus committed in order, and a reader that saw N has missed nothing below it.
    const statement = this.connection.prepare(
      `INSERT INTO revisions (subject, grp, epoch, n, seq)
       VALUES (?, ?, lower(hex(randomblob(6))), 1, (SELECT coalesce(max(seq), 0) + 1 FROM revisions))
       ON CONFLICT (subject, grp) DO UPDATE SET n = n + 1, seq = excluded.seq`,
    );
    const cached = this.connection.revisionCache.texts;
    for (const group of new Set(groups)) {
      statement.run(this.subject, group);
      // Forgotten, not updated: the transaction may still roll back.
      cached.delete(`${this.subject}\u0000${group}`);
    }
  }
}
