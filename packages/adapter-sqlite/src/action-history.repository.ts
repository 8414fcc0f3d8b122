import { inject, injectable } from 'inversify';
import {
  type ActionHistoryEntry,
  type ActionHistoryRepository,
  type NewActionHistoryEntry,
  storedActor,
} from '@hortus/core';
import { newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface ActionHistoryRow {
  id: string;
  grp: string;
  object: string;
  value: string;
  at: number;
  actor_kind: string;
  actor_id: string | null;
}

const actionHistoryMapper = {
  toRow(entry: ActionHistoryEntry): ActionHistoryRow {
    return {
      id: entry.id,
      grp: entry.group,
      object: entry.object,
      value: entry.value,
      at: entry.at.getTime(),
      actor_kind: entry.actor.kind,
      actor_id: entry.actor.id ?? null,
    };
  },
  toEntity(row: ActionHistoryRow): ActionHistoryEntry {
    return {
      id: row.id,
      group: row.grp,
      object: row.object,
      value: row.value,
      at: new Date(row.at),
      actor: storedActor(row.actor_kind, row.actor_id),
    };
  },
};

const columns = 'id, grp, object, value, at, actor_kind, actor_id';
const insert = `INSERT INTO action_history (${columns})
  VALUES (@id, @grp, @object, @value, @at, @actor_kind, @actor_id)`;

@injectable()
export class SqliteActionHistoryRepository extends SqliteRepository implements ActionHistoryRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'action', 'That history entry is already stored');
  }

  async record(entry: NewActionHistoryEntry, keep: number): Promise<ActionHistoryEntry> {
    const row = actionHistoryMapper.toRow({ ...entry, id: newId() });
    this.run(() =>
      this.connection.write(() => {
        this.connection.prepare(insert).run(row);
        // The entries past the newest `keep` of this action, found through the (grp, object, at, seq) index.
        this.connection
          .prepare(
            `DELETE FROM action_history WHERE seq IN (
               SELECT seq FROM action_history WHERE grp = ? AND object = ?
               ORDER BY at DESC, seq DESC LIMIT -1 OFFSET ?)`,
          )
          .run(row.grp, row.object, Math.max(Math.floor(keep), 0));
      }),
    );
    return actionHistoryMapper.toEntity(row);
  }

  async list(group: string, object: string | undefined, limit: number): Promise<ActionHistoryEntry[]> {
    if (!(limit > 0)) return [];
    const rows = this.run(() =>
      object === undefined
        ? (this.connection
            .prepare(`SELECT ${columns} FROM action_history WHERE grp = ? ORDER BY at DESC, seq DESC LIMIT ?`)
            .all(group, Math.floor(limit)) as ActionHistoryRow[])
        : (this.connection
            .prepare(
              `SELECT ${columns} FROM action_history WHERE grp = ? AND object = ?
               ORDER BY at DESC, seq DESC LIMIT ?`,
            )
            .all(group, object, Math.floor(limit)) as ActionHistoryRow[]),
    );
    return rows.map(actionHistoryMapper.toEntity);
  }

  async deleteByAction(group: string, object: string): Promise<number> {
    return this.run(() =>
      this.connection.write(
        () =>
          this.connection
            .prepare('DELETE FROM action_history WHERE grp = ? AND object = ?')
            .run(group, object).changes,
      ),
    );
  }

  async deleteByGroup(group: string): Promise<number> {
    return this.run(() =>
      this.connection.write(
        () => this.connection.prepare('DELETE FROM action_history WHERE grp = ?').run(group).changes,
      ),
    );
  }

  async groups(): Promise<string[]> {
    const rows = this.run(
      () =>
        this.connection.prepare('SELECT DISTINCT grp FROM action_history ORDER BY grp').all() as {
          grp: string;
        }[],
    );
    return rows.map((row) => row.grp);
  }

  async restore(entry: ActionHistoryEntry): Promise<void> {
    const row = actionHistoryMapper.toRow(entry);
    this.run(() =>
      this.connection.write(() =>
        this.connection
          .prepare(
            `INSERT INTO action_history (${columns})
             VALUES (@id, @grp, @object, @value, @at, @actor_kind, @actor_id) ON CONFLICT (id) DO NOTHING`,
          )
          .run(row),
      ),
    );
  }
}
