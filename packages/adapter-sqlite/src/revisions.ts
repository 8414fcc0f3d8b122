import { type RevisionSubject } from '@hortus/core';
import { type SqliteConnection } from './support.js';

/**
 * Per-group change counters in the database file, so every process on the file (the server, the CLI) sees
 * every change: a revision read is one lookup by primary key, never an in-process cache.
 */
export class SqliteRevisions {
  constructor(
    private readonly connection: SqliteConnection,
    private readonly subject: RevisionSubject,
  ) {}

  current(group: string): string {
    const row = this.connection
      .prepare('SELECT epoch, n FROM revisions WHERE subject = ? AND grp = ?')
      .get(this.subject, group) as { epoch: string; n: number } | undefined;
    return row === undefined ? '0' : `${row.epoch}.${row.n}`;
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
    const statement = this.connection.prepare(
      `INSERT INTO revisions (subject, grp, epoch, n) VALUES (?, ?, lower(hex(randomblob(6))), 1)
       ON CONFLICT (subject, grp) DO UPDATE SET n = n + 1`,
    );
    for (const group of new Set(groups)) statement.run(this.subject, group);
  }
}
