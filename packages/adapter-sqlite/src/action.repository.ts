import { inject, injectable } from 'inversify';
import {
  type Action,
  type ActionRepository,
  type AutomationSet,
  type Lockout,
  lockoutsPart,
  type NewAction,
  storedAutomations,
} from '@hortus/core';
import { SqliteRevisions } from './revisions.js';
import { fromJson, newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface ActionRow {
  id: string;
  grp: string;
  object: string;
  value: string;
  automations: string;
  /** JSON of the lockouts; NULL when the action has none (schema version 19). */
  lockouts: string | null;
}

function lockoutsJson(lockouts: readonly Lockout[] | undefined): string | null {
  const kept = lockoutsPart(lockouts).lockouts;
  return kept === undefined ? null : JSON.stringify(kept);
}

const actionMapper = {
  toRow(action: NewAction): ActionRow {
    return {
      id: newId(),
      grp: action.group,
      object: action.object,
      value: action.value,
      automations: JSON.stringify(storedAutomations(action.automations)),
      lockouts: lockoutsJson(action.lockouts),
    };
  },
  toEntity(row: ActionRow): Action {
    return {
      id: row.id,
      group: row.grp,
      object: row.object,
      value: String(row.value),
      automations: storedAutomations(fromJson(row.automations)),
      ...(row.lockouts === null ? {} : lockoutsPart(fromJson(row.lockouts) as Lockout[])),
    };
  },
};

const columns = 'id, grp, object, value, automations, lockouts';
const values = '@id, @grp, @object, @value, @automations, @lockouts';

@injectable()
export class SqliteActionRepository extends SqliteRepository implements ActionRepository {
  private readonly revisions: SqliteRevisions;

  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'action', 'The group already has an action of that object name');
    this.revisions = new SqliteRevisions(connection, 'actions');
  }

  async create(action: NewAction): Promise<Action> {
    const row = actionMapper.toRow(action);
    this.run(() =>
      this.connection.write(() => {
        this.connection.prepare(`INSERT INTO actions (${columns}) VALUES (${values})`).run(row);
        this.revisions.bump([row.grp]);
      }),
    );
    return actionMapper.toEntity(row);
  }

  async delete(group: string, object: string): Promise<boolean> {
    return this.remove('DELETE FROM actions WHERE grp = ? AND object = ?', group, [group, object]) > 0;
  }

  async deleteByGroup(group: string): Promise<number> {
    return this.remove('DELETE FROM actions WHERE grp = ?', group, [group]);
  }

  /** Runs the DELETE and bumps the revision in the same transaction when it removed anything. */
  private remove(sql: string, group: string, params: readonly string[]): number {
    return this.run(() =>
      this.connection.write(() => {
        const removed = this.connection.prepare(sql).run(...params).changes;
        if (removed > 0) this.revisions.bump([group]);
        return removed;
      }),
    );
  }

  /** An action of that group and object under another id (a forced copy) gives way to this one. */
  async restore(action: Action): Promise<void> {
    this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare('DELETE FROM actions WHERE grp = ? AND object = ? AND id <> ?')
          .run(action.group, action.object, action.id);
        this.connection
          .prepare(
            `INSERT INTO actions (${columns}) VALUES (${values})
             ON CONFLICT (id) DO UPDATE SET grp = excluded.grp, object = excluded.object,
               value = excluded.value, automations = excluded.automations, lockouts = excluded.lockouts`,
          )
          .run({
            id: action.id,
            grp: action.group,
            object: action.object,
            value: action.value,
            automations: JSON.stringify(storedAutomations(action.automations)),
            lockouts: lockoutsJson(action.lockouts),
          });
        this.revisions.bump([action.group]);
      }),
    );
  }

  async revision(group: string): Promise<string> {
    return this.run(() => this.revisions.current(group));
  }

  async groupRevisions(): Promise<Map<string, string>> {
    return this.run(() => {
      const revisions = this.revisions.all();
      // Actions written before counters existed (an older file) have none yet: they answer '0', as revision() does.
      const groups = this.connection.prepare('SELECT DISTINCT grp FROM actions').all() as { grp: string }[];
      for (const { grp } of groups) if (!revisions.has(grp)) revisions.set(grp, '0');
      return revisions;
    });
  }

  async find(group: string, object: string): Promise<Action | undefined> {
    const row = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns} FROM actions WHERE grp = ? AND object = ?`)
          .get(group, object) as ActionRow | undefined,
    );
    return row === undefined ? undefined : actionMapper.toEntity(row);
  }

  async listByGroup(group: string): Promise<Action[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns} FROM actions WHERE grp = ? ORDER BY object`)
          .all(group) as ActionRow[],
    );
    return rows.map(actionMapper.toEntity);
  }

  async setValue(group: string, object: string, value: string): Promise<Action | undefined> {
    return this.update(group, object, 'value', value);
  }

  async setAutomations(
    group: string,
    object: string,
    automations: readonly AutomationSet[],
  ): Promise<Action | undefined> {
    return this.update(group, object, 'automations', JSON.stringify(storedAutomations(automations)));
  }

  async setLockouts(
    group: string,
    object: string,
    lockouts: readonly Lockout[],
  ): Promise<Action | undefined> {
    return this.update(group, object, 'lockouts', lockoutsJson(lockouts));
  }

  private update(
    group: string,
    object: string,
    column: 'value' | 'automations' | 'lockouts',
    text: string | null,
  ): Action | undefined {
    const row = this.run(() =>
      this.connection.write(() => {
        const updated = this.connection
          .prepare(`UPDATE actions SET ${column} = ? WHERE grp = ? AND object = ? RETURNING ${columns}`)
          .get(text, group, object) as ActionRow | undefined;
        if (updated !== undefined) this.revisions.bump([group]);
        return updated;
      }),
    );
    return row === undefined ? undefined : actionMapper.toEntity(row);
  }
}
