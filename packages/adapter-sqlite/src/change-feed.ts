import { inject, injectable } from 'inversify';
import { type ChangeFeed, type GroupChanges } from '@hortus/core';
import { SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

const prefix = 'sqlite:';

/**
 * The change feed over the revisions table: every bump stamps its row with the table's next `seq` (see
 * SqliteRevisions.bump), so what changed since N is one range of an index, whichever process wrote.
 */
@injectable()
export class SqliteChangeFeed extends SqliteRepository implements ChangeFeed {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'group', 'That change is already stored');
  }

  async changesSince(cursor: string | undefined): Promise<GroupChanges> {
    return this.run(() => {
      const newest = Number(this.connection.prepare('SELECT max(seq) FROM revisions').pluck().get() ?? 0);
      const since = cursor?.startsWith(prefix) === true ? Number(cursor.slice(prefix.length)) : Number.NaN;
      const next = `${prefix}${newest}`;
      // Past the newest number: a cursor of another file, or of this one before it was replaced.
      if (!Number.isSafeInteger(since) || since < 0 || since > newest) {
        return { groups: [], cursor: next, reset: true };
      }
      if (since === newest) return { groups: [], cursor: next, reset: false };
      const groups = this.connection
        .prepare('SELECT DISTINCT grp FROM revisions WHERE seq > ? AND seq <= ?')
        .pluck()
        .all(since, newest) as string[];
      return { groups, cursor: next, reset: false };
    });
  }
}
