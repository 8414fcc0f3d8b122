import { inject, injectable } from 'inversify';
import {
  type AccessKey,
  type AccessKeyCopy,
  type AccessKeyKind,
  type AccessKeyRepository,
  type NewAccessKey,
} from '@hortus/core';
import {
  newId,
  SQLITE_CONNECTION,
  type SqliteConnection,
  SqliteRepository,
  toStringList,
} from './support.js';

interface AccessKeyRow {
  id: string;
  name: string;
  kind: string;
  groups: string;
  created_at: number;
  revoked_at: number | null;
}

const accessKeyMapper = {
  toRow(key: NewAccessKey): AccessKeyRow & { secret_hash: string } {
    return {
      id: newId(),
      name: key.name,
      kind: key.kind,
      groups: JSON.stringify(key.groups.map(String)),
      secret_hash: key.secretHash,
      created_at: key.createdAt.getTime(),
      revoked_at: null,
    };
  },
  toEntity(row: AccessKeyRow): AccessKey {
    return {
      id: row.id,
      name: row.name,
      kind: row.kind as AccessKeyKind,
      groups: toStringList(row.groups),
      createdAt: new Date(row.created_at),
      ...(row.revoked_at === null ? {} : { revokedAt: new Date(row.revoked_at) }),
    };
  },
};

/** The hash stays in the store: nothing above the repository ever needs it again. */
const publicColumns = 'id, name, kind, groups, created_at, revoked_at';

@injectable()
export class SqliteAccessKeyRepository extends SqliteRepository implements AccessKeyRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'access-key', 'An access key with that secret exists');
  }

  async create(key: NewAccessKey): Promise<AccessKey> {
    const row = accessKeyMapper.toRow(key);
    this.run(() =>
      this.connection
        .prepare(
          `INSERT INTO access_keys (id, name, kind, groups, secret_hash, created_at, revoked_at)
           VALUES (@id, @name, @kind, @groups, @secret_hash, @created_at, @revoked_at)`,
        )
        .run(row),
    );
    return accessKeyMapper.toEntity(row);
  }

  async findByHash(secretHash: string): Promise<AccessKey | undefined> {
    if (typeof secretHash !== 'string') return undefined;
    const row = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${publicColumns} FROM access_keys WHERE secret_hash = ?`)
          .get(secretHash) as AccessKeyRow | undefined,
    );
    return row === undefined ? undefined : accessKeyMapper.toEntity(row);
  }

  async list(): Promise<AccessKey[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${publicColumns} FROM access_keys ORDER BY created_at, seq`)
          .all() as AccessKeyRow[],
    );
    return rows.map(accessKeyMapper.toEntity);
  }

  async revoke(id: string, at: Date): Promise<AccessKey | undefined> {
    if (typeof id !== 'string') return undefined;
    // coalesce keeps the first revokedAt when the key was revoked before.
    const row = this.run(
      () =>
        this.connection
          .prepare(
            `UPDATE access_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING ${publicColumns}`,
          )
          .get(at.getTime(), id) as AccessKeyRow | undefined,
    );
    return row === undefined ? undefined : accessKeyMapper.toEntity(row);
  }

  async listCopies(): Promise<AccessKeyCopy[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${publicColumns}, secret_hash FROM access_keys ORDER BY created_at, seq`)
          .all() as (AccessKeyRow & { secret_hash: string })[],
    );
    return rows.map((row) => ({ ...accessKeyMapper.toEntity(row), secretHash: row.secret_hash }));
  }

  /** A key with that digest under another id (a forced copy) gives way to this one. */
  async restore(key: AccessKeyCopy): Promise<void> {
    this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare('DELETE FROM access_keys WHERE secret_hash = ? AND id <> ?')
          .run(key.secretHash, key.id);
        this.connection
          .prepare(
            `INSERT INTO access_keys (${publicColumns}, secret_hash)
             VALUES (@id, @name, @kind, @groups, @created_at, @revoked_at, @secret_hash)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind,
               groups = excluded.groups, created_at = excluded.created_at, revoked_at = excluded.revoked_at,
               secret_hash = excluded.secret_hash`,
          )
          .run({
            id: key.id,
            name: key.name,
            kind: key.kind,
            groups: JSON.stringify(key.groups.map(String)),
            created_at: key.createdAt.getTime(),
            revoked_at: key.revokedAt?.getTime() ?? null,
            secret_hash: key.secretHash,
          });
      }),
    );
  }

  async hasAny(): Promise<boolean> {
    return this.run(() => this.connection.prepare('SELECT 1 FROM access_keys LIMIT 1').get() !== undefined);
  }
}
