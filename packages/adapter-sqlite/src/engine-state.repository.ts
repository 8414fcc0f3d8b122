import { inject, injectable } from 'inversify';
import { type EngineState, type EngineStateRepository, type EngineValue } from '@hortus/core';
import { fromJson, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface EngineStateRow {
  version: number;
  value: string;
  updated_at: number;
}

const engineStateMapper = {
  toEntity(row: EngineStateRow): EngineState {
    return {
      version: Number(row.version),
      value: fromJson(row.value) as EngineValue,
      updatedAt: new Date(row.updated_at),
    };
  },
};

/**
 * One row per key. A compare-and-set is a conditional write in one transaction holding the write lock,
 * so exactly one caller can move a key from a version, across processes too.
 */
@injectable()
export class SqliteEngineStateRepository extends SqliteRepository implements EngineStateRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'action', 'Another writer stored that engine state version first');
  }

  async list(): Promise<{ key: string; state: EngineState }[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare('SELECT key, version, value, updated_at FROM engine_state ORDER BY key')
          .all() as (EngineStateRow & { key: string })[],
    );
    return rows.map((row) => ({ key: row.key, state: engineStateMapper.toEntity(row) }));
  }

  async restore(key: string, state: EngineState): Promise<void> {
    this.run(() =>
      this.connection
        .prepare(
          `INSERT INTO engine_state (key, version, value, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET version = excluded.version, value = excluded.value,
             updated_at = excluded.updated_at`,
        )
        .run(key, state.version, JSON.stringify(state.value), state.updatedAt.getTime()),
    );
  }

  async get(key: string): Promise<EngineState | undefined> {
    const row = this.run(
      () =>
        this.connection
          .prepare('SELECT version, value, updated_at FROM engine_state WHERE key = ?')
          .get(key) as EngineStateRow | undefined,
    );
    return row === undefined ? undefined : engineStateMapper.toEntity(row);
  }

  async compareAndSet(key: string, expectedVersion: number, value: EngineValue, at: Date): Promise<boolean> {
    const text = JSON.stringify(value);
    return this.run(() =>
      this.connection.write(() => {
        if (expectedVersion === 0) {
          return (
            this.connection
              .prepare(
                'INSERT INTO engine_state (key, version, value, updated_at) VALUES (?, 1, ?, ?) ON CONFLICT DO NOTHING',
              )
              .run(key, text, at.getTime()).changes === 1
          );
        }
        return (
          this.connection
            .prepare(
              'UPDATE engine_state SET version = version + 1, value = ?, updated_at = ? WHERE key = ? AND version = ?',
            )
            .run(text, at.getTime(), key, expectedVersion).changes === 1
        );
      }),
    );
  }

  async purgeBefore(before: Date): Promise<number> {
    return this.run(
      () =>
        this.connection.prepare('DELETE FROM engine_state WHERE updated_at < ?').run(before.getTime())
          .changes,
    );
  }
}
