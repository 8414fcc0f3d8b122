import { inject, injectable } from 'inversify';
import {
  type NewStageAssignment,
  type Recipe,
  type StageAssignment,
  type StageRepository,
} from '@hortus/core';
import { fromJson, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface StageRow {
  grp: string;
  version: number;
  recipe: string;
  stage: string;
  started_at: number;
  applied: number;
  applied_at: number | null;
}

const stageMapper = {
  toEntity(row: StageRow): StageAssignment {
    return {
      group: row.grp,
      recipe: fromJson(row.recipe) as Recipe,
      stage: row.stage,
      startedAt: new Date(Number(row.started_at)),
      applied: Number(row.applied) === 1,
      ...(row.applied_at === null ? {} : { appliedAt: new Date(Number(row.applied_at)) }),
      version: Number(row.version),
    };
  },
  toParameters(assignment: NewStageAssignment): unknown[] {
    return [
      JSON.stringify(assignment.recipe),
      assignment.stage,
      assignment.startedAt.getTime(),
      assignment.applied ? 1 : 0,
      assignment.appliedAt?.getTime() ?? null,
    ];
  },
};

const columns = 'grp, version, recipe, stage, started_at, applied, applied_at';

/** One row per group; a compare-and-set is one conditional write holding the write lock. */
@injectable()
export class SqliteStageRepository extends SqliteRepository implements StageRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'group', 'Another writer changed the stage first');
  }

  async get(group: string): Promise<StageAssignment | undefined> {
    const row = this.run(
      () =>
        this.connection.prepare(`SELECT ${columns} FROM group_stages WHERE grp = ?`).get(group) as
          StageRow | undefined,
    );
    return row === undefined ? undefined : stageMapper.toEntity(row);
  }

  async compareAndSet(assignment: NewStageAssignment, expectedVersion: number): Promise<boolean> {
    const values = stageMapper.toParameters(assignment);
    return this.run(() =>
      this.connection.write(() => {
        if (expectedVersion === 0)
          return (
            this.connection
              .prepare(
                `INSERT INTO group_stages (${columns}) VALUES (?, 1, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
              )
              .run(assignment.group, ...values).changes === 1
          );
        return (
          this.connection
            .prepare(
              `UPDATE group_stages SET version = version + 1, recipe = ?, stage = ?, started_at = ?,
                 applied = ?, applied_at = ? WHERE grp = ? AND version = ?`,
            )
            .run(...values, assignment.group, expectedVersion).changes === 1
        );
      }),
    );
  }

  async delete(group: string): Promise<boolean> {
    return this.run(
      () =>
        this.connection.write(
          () => this.connection.prepare('DELETE FROM group_stages WHERE grp = ?').run(group).changes,
        ) === 1,
    );
  }

  async list(): Promise<StageAssignment[]> {
    const rows = this.run(
      () => this.connection.prepare(`SELECT ${columns} FROM group_stages ORDER BY grp`).all() as StageRow[],
    );
    return rows.map((row) => stageMapper.toEntity(row));
  }
}
