import { inject, injectable } from 'inversify';
import {
  actorFromText,
  actorText,
  ANONYMOUS_ACTOR,
  type AuditEntry,
  type AuditLog,
  type AuditQuery,
  type NewAuditEntry,
} from '@hortus/core';
import {
  fromJson,
  newId,
  SQLITE_CONNECTION,
  type SqliteConnection,
  SqliteRepository,
  toJson,
} from './support.js';

interface AuditRow {
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string;
  grp: string | null;
  before: string | null;
  after: string | null;
}

const auditMapper = {
  toRow(entry: NewAuditEntry): AuditRow {
    return {
      id: newId(),
      at: entry.at.getTime(),
      actor: actorText(entry.actor),
      action: entry.action,
      target: entry.target,
      grp: entry.group ?? null,
      before: toJson(entry.before),
      after: toJson(entry.after),
    };
  },
  toEntity(row: AuditRow): AuditEntry {
    return {
      id: row.id,
      at: new Date(Number(row.at)),
      actor: actorFromText(row.actor) ?? ANONYMOUS_ACTOR,
      action: row.action,
      target: row.target,
      ...(row.grp === null ? {} : { group: row.grp }),
      ...(row.before === null ? {} : { before: fromJson(row.before) }),
      ...(row.after === null ? {} : { after: fromJson(row.after) }),
    };
  },
};

const columns = 'id, at, actor, action, target, grp, before, after';

/** The `audit_log` table (migration 20); seq orders entries of one instant. */
@injectable()
export class SqliteAuditLog extends SqliteRepository implements AuditLog {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'audit', 'That audit entry is already stored');
  }

  async record(entry: NewAuditEntry): Promise<AuditEntry> {
    const row = auditMapper.toRow(entry);
    this.run(() =>
      this.connection.write(() =>
        this.connection
          .prepare(
            `INSERT INTO audit_log (${columns}) VALUES (@id, @at, @actor, @action, @target, @grp, @before, @after)`,
          )
          .run(row),
      ),
    );
    return auditMapper.toEntity(row);
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (query.group !== undefined) {
      where.push('grp = ?');
      values.push(query.group);
    }
    if (query.since !== undefined) {
      where.push('at >= ?');
      values.push(query.since.getTime());
    }
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${columns} FROM audit_log ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
             ORDER BY at DESC, seq DESC LIMIT ?`,
          )
          .all(...values, query.limit) as AuditRow[],
    );
    return rows.map((row) => auditMapper.toEntity(row));
  }
}
