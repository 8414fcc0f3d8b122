import { inject, injectable } from 'inversify';
import { type Group, type GroupPackage, type GroupRepository, type NewGroup } from '@hortus/core';
import { SqliteRevisions } from './revisions.js';
import {
  fromJson,
  newId,
  SQLITE_CONNECTION,
  type SqliteConnection,
  SqliteRepository,
  toJson,
  toStringList,
} from './support.js';

interface GroupRow {
  id: string;
  name: string;
  package: string;
  employee: string;
  settings: string | null;
  retention_days?: number | null;
}

const groupMapper = {
  toRow(group: NewGroup): GroupRow {
    return {
      id: newId(),
      name: group.name,
      package: group.package,
      employee: JSON.stringify(group.employee.map(String)),
      settings: toJson(group.settings),
    };
  },
  toEntity(row: GroupRow): Group {
    return {
      id: row.id,
      name: row.name,
      package: row.package as GroupPackage,
      employee: toStringList(row.employee),
      settings: fromJson(row.settings),
      ...(row.retention_days === null || row.retention_days === undefined
        ? {}
        : { retentionDays: row.retention_days }),
    };
  },
};

const columns = 'id, name, package, employee, settings, retention_days';

@injectable()
export class SqliteGroupRepository extends SqliteRepository implements GroupRepository {
  private readonly revisions: SqliteRevisions;

  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'group', 'A group with that name exists');
    this.revisions = new SqliteRevisions(connection, 'group');
  }

  async create(group: NewGroup): Promise<Group> {
    const row = groupMapper.toRow(group);
    this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare(
            `INSERT INTO groups (id, name, package, employee, settings) VALUES (@id, @name, @package, @employee, @settings)`,
          )
          .run(row);
        this.revisions.bump([row.name]);
      }),
    );
    return groupMapper.toEntity(row);
  }

  async setRetention(name: string, days: number | undefined): Promise<Group | undefined> {
    const row = this.run(() =>
      this.connection.write(() => {
        const updated = this.connection
          .prepare(`UPDATE groups SET retention_days = ? WHERE name = ? RETURNING ${columns}`)
          .get(days ?? null, name) as GroupRow | undefined;
        if (updated !== undefined) this.revisions.bump([name]);
        return updated;
      }),
    );
    return row === undefined ? undefined : groupMapper.toEntity(row);
  }

  async delete(name: string): Promise<boolean> {
    return this.run(() =>
      this.connection.write(() => {
        const removed = this.connection.prepare('DELETE FROM groups WHERE name = ?').run(name).changes > 0;
        if (removed) this.revisions.bump([name]);
        return removed;
      }),
    );
  }

  /** A group of that name under another id (a forced copy) gives way; the id's row is then upserted. */
  async restore(group: Group): Promise<void> {
    this.run(() =>
      this.connection.write(() => {
        this.connection.prepare('DELETE FROM groups WHERE name = ? AND id <> ?').run(group.name, group.id);
        this.connection
          .prepare(
            `INSERT INTO groups (${columns}) VALUES (@id, @name, @package, @employee, @settings, @retention_days)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, package = excluded.package,
               employee = excluded.employee, settings = excluded.settings, retention_days = excluded.retention_days`,
          )
          .run({
            id: group.id,
            name: group.name,
            package: group.package,
            employee: JSON.stringify(group.employee.map(String)),
            settings: toJson(group.settings),
            retention_days: group.retentionDays ?? null,
          });
        this.revisions.bump([group.name]);
      }),
    );
  }

  async revision(name: string): Promise<string> {
    return this.run(() => this.revisions.current(name));
  }

  async findByName(name: string): Promise<Group | undefined> {
    const row = this.run(
      () =>
        this.connection.prepare(`SELECT ${columns} FROM groups WHERE name = ?`).get(name) as
          GroupRow | undefined,
    );
    return row === undefined ? undefined : groupMapper.toEntity(row);
  }

  async list(): Promise<Group[]> {
    const rows = this.run(
      () => this.connection.prepare(`SELECT ${columns} FROM groups ORDER BY name`).all() as GroupRow[],
    );
    return rows.map(groupMapper.toEntity);
  }

  /** Read and rewritten in one write transaction: concurrent additions queue on the lock, none is lost. */
  async addEmployee(name: string, employee: string): Promise<Group | undefined> {
    const row = this.run(() =>
      this.connection.write(() => {
        const current = this.connection.prepare('SELECT employee FROM groups WHERE name = ?').get(name) as
          Pick<GroupRow, 'employee'> | undefined;
        if (current === undefined) return undefined;
        const updated = this.connection
          .prepare(`UPDATE groups SET employee = ? WHERE name = ? RETURNING ${columns}`)
          .get(JSON.stringify([...toStringList(current.employee), employee]), name) as GroupRow;
        this.revisions.bump([name]);
        return updated;
      }),
    );
    return row === undefined ? undefined : groupMapper.toEntity(row);
  }

  async replaceSettings(name: string, settings: unknown): Promise<Group | undefined> {
    const row = this.run(() =>
      this.connection.write(() => {
        const updated = this.connection
          .prepare(`UPDATE groups SET settings = ? WHERE name = ? RETURNING ${columns}`)
          .get(toJson(settings), name) as GroupRow | undefined;
        if (updated !== undefined) this.revisions.bump([name]);
        return updated;
      }),
    );
    return row === undefined ? undefined : groupMapper.toEntity(row);
  }
}
