import { inject, injectable } from 'inversify';
import { type ServerSecretRepository } from '@hortus/core';
import { SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

@injectable()
export class SqliteServerSecretRepository extends SqliteRepository implements ServerSecretRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'user', 'The secret exists already');
  }

  /** Insert-if-absent and read back under one write lock: every process answers the one stored value. */
  async findOrCreate(name: string, candidate: string): Promise<string> {
    return this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare('INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING')
          .run(name, candidate);
        const row = this.connection.prepare('SELECT value FROM server_secrets WHERE name = ?').get(name) as {
          value: string;
        };
        return row.value;
      }),
    );
  }

  async list(): Promise<{ name: string; value: string }[]> {
    return this.run(
      () =>
        this.connection.prepare('SELECT name, value FROM server_secrets ORDER BY name').all() as {
          name: string;
          value: string;
        }[],
    );
  }

  async restore(name: string, value: string): Promise<void> {
    this.run(() =>
      this.connection
        .prepare(
          'INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
        )
        .run(name, value),
    );
  }
}
