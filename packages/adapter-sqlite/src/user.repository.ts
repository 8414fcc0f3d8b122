import { inject, injectable } from 'inversify';
import {
  emailKey,
  storedEmailKey,
  type ImportedUser,
  type NewUser,
  type PasswordResetChange,
  type User,
  type UserCredentials,
  type UserOrigin,
  userOrigins,
  type UserProvenance,
  type UserRecord,
  type UserCopy,
  type UserRepository,
  type UserRole,
  storedUserRole,
} from '@hortus/core';
import { newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface UserRow {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  grp: string;
  /** NULL: the default role, an operator (schema version 18). */
  role: string | null;
}

/** The credential columns (schema version 3); they are read only by findCredentials. */
interface CredentialRow {
  password_hash: string | null;
  session_version: number;
  reset_digest: string | null;
  reset_expires_at: number | null;
}

const userMapper = {
  toRow(user: NewUser): UserRow {
    return {
      id: newId(),
      first_name: user.firstName,
      last_name: user.lastName,
      email: user.email,
      grp: user.group,
      role: user.role ?? null,
    };
  },
  toEntity(row: UserRow): User {
    return {
      id: row.id,
      firstName: row.first_name,
      lastName: row.last_name,
      email: row.email,
      group: row.grp,
      role: storedUserRole(row.role),
    };
  },
  toCredentials(row: CredentialRow): UserCredentials {
    return {
      sessionVersion: row.session_version,
      ...(row.password_hash === null ? {} : { passwordHash: row.password_hash }),
      ...(row.reset_digest === null || row.reset_expires_at === null
        ? {}
        : { reset: { tokenDigest: row.reset_digest, expiresAt: new Date(row.reset_expires_at) } }),
    };
  },
};

// Public columns only: a hash never leaves through the methods that answer a User.
const columns = 'id, first_name, last_name, email, grp, role';
/** The form of the ids this store issues (see newId): an imported id of that form is kept. */
const idPattern = /^[0-9a-f]{24}$/u;

@injectable()
export class SqliteUserRepository extends SqliteRepository implements UserRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'user', 'Another user has that e-mail');
  }

  async create(
    user: NewUser,
    options: { readonly passwordHash?: string; readonly provenance?: UserProvenance } = {},
  ): Promise<User> {
    const row = userMapper.toRow(user);
    this.run(() => this.insert(row, options.passwordHash, options.provenance));
    return userMapper.toEntity(row);
  }

  /** The id check and the insert are one write transaction, so a kept id cannot be taken in between. */
  async createImported(user: ImportedUser): Promise<User> {
    const { id, passwordHash, caseSensitiveEmail, createdAt, ...fields } = user;
    const row = userMapper.toRow(fields);
    const provenance: UserProvenance = { origin: 'migration', createdAt: createdAt ?? new Date() };
    this.run(() =>
      this.connection.write(() => {
        const free =
          id !== undefined &&
          idPattern.test(id) &&
          this.connection.prepare('SELECT 1 FROM users WHERE id = ?').get(id) === undefined;
        if (free) row.id = id;
        this.insert(row, passwordHash, provenance, caseSensitiveEmail);
      }),
    );
    return userMapper.toEntity(row);
  }

  private insert(
    row: UserRow,
    passwordHash: string | undefined,
    provenance: UserProvenance | undefined,
    caseSensitiveEmail = false,
  ): void {
    this.connection
      .prepare(
        `INSERT INTO users (${columns}, email_key, password_hash, created_at, origin)
         VALUES (@id, @first_name, @last_name, @email, @grp, @role, @email_key, @password_hash, @created_at, @origin)`,
      )
      .run({
        ...row,
        email_key: storedEmailKey(row.email, caseSensitiveEmail),
        password_hash: passwordHash ?? null,
        created_at: provenance?.createdAt.getTime() ?? null,
        origin: provenance?.origin ?? null,
      });
  }

  async list(): Promise<UserRecord[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns}, created_at, origin FROM users ORDER BY seq`)
          .all() as (UserRow & { created_at: number | null; origin: string | null })[],
    );
    return rows.map((row) => ({
      ...userMapper.toEntity(row),
      ...(row.created_at === null ? {} : { createdAt: new Date(row.created_at) }),
      origin: (userOrigins as readonly string[]).includes(row.origin ?? '')
        ? (row.origin as UserOrigin)
        : 'unknown',
    }));
  }

  /** Ids are compared as text, so a malformed one simply matches nothing. */
  async findById(id: string): Promise<User | undefined> {
    if (typeof id !== 'string') return undefined;
    const row = this.run(
      () =>
        this.connection.prepare(`SELECT ${columns} FROM users WHERE id = ?`).get(id) as UserRow | undefined,
    );
    return row === undefined ? undefined : userMapper.toEntity(row);
  }

  async findByEmail(email: string): Promise<User | undefined> {
    if (typeof email !== 'string') return undefined;
    const row = this.run(
      () =>
        // The exact e-mail first: a case-sensitive account is found only so.
        this.connection
          .prepare(
            `SELECT ${columns} FROM users WHERE email = @exact OR email_key = @key
             ORDER BY email = @exact DESC LIMIT 1`,
          )
          .get({ exact: email.trim(), key: emailKey(email) }) as UserRow | undefined,
    );
    return row === undefined ? undefined : userMapper.toEntity(row);
  }

  async changeEmail(id: string, email: string): Promise<User | undefined> {
    if (typeof id !== 'string') return undefined;
    const row = this.run(
      () =>
        this.connection
          .prepare(
            `UPDATE users SET email = ?, email_key = ?, reset_digest = NULL, reset_expires_at = NULL
             WHERE id = ? RETURNING ${columns}`,
          )
          .get(email, emailKey(email), id) as UserRow | undefined,
    );
    return row === undefined ? undefined : userMapper.toEntity(row);
  }

  async restore(user: UserCopy): Promise<void> {
    this.run(() =>
      this.connection
        .prepare(
          `INSERT INTO users (${columns}, email_key, password_hash, session_version, reset_digest,
             reset_expires_at, created_at, origin)
           VALUES (@id, @first_name, @last_name, @email, @grp, @role, @email_key, @password_hash, @session_version,
             @reset_digest, @reset_expires_at, @created_at, @origin)
           ON CONFLICT (id) DO UPDATE SET first_name = excluded.first_name, last_name = excluded.last_name,
             email = excluded.email, grp = excluded.grp, role = excluded.role, email_key = excluded.email_key,
             password_hash = excluded.password_hash, session_version = excluded.session_version,
             reset_digest = excluded.reset_digest, reset_expires_at = excluded.reset_expires_at,
             created_at = excluded.created_at, origin = excluded.origin`,
        )
        .run({
          id: user.id,
          first_name: user.firstName,
          last_name: user.lastName,
          email: user.email,
          grp: user.group,
          role: user.role,
          email_key: emailKey(user.email),
          password_hash: user.passwordHash ?? null,
          session_version: user.sessionVersion,
          reset_digest: user.reset?.tokenDigest ?? null,
          reset_expires_at: user.reset?.expiresAt.getTime() ?? null,
          created_at: user.createdAt?.getTime() ?? null,
          origin: user.origin === 'unknown' ? null : user.origin,
        }),
    );
  }

  async findCredentials(id: string): Promise<UserCredentials | undefined> {
    if (typeof id !== 'string') return undefined;
    const row = this.run(
      () =>
        this.connection
          .prepare(
            'SELECT password_hash, session_version, reset_digest, reset_expires_at FROM users WHERE id = ?',
          )
          .get(id) as CredentialRow | undefined,
    );
    return row === undefined ? undefined : userMapper.toCredentials(row);
  }

  async setPassword(
    id: string,
    passwordHash: string,
    options: { readonly endSessions: boolean; readonly ifHashIs?: string },
  ): Promise<number | undefined> {
    if (typeof id !== 'string') return undefined;
    // `ifHashIs IS NULL OR ...`: one statement for both cases; a rehash applies only to the hash it read.
    return this.versionAfter(
      `UPDATE users SET password_hash = @hash, session_version = session_version + @bump,
         reset_digest = NULL, reset_expires_at = NULL
       WHERE id = @id AND (@ifHashIs IS NULL OR password_hash = @ifHashIs)
       RETURNING session_version`,
      { id, hash: passwordHash, bump: options.endSessions ? 1 : 0, ifHashIs: options.ifHashIs ?? null },
    );
  }

  async endSessions(id: string): Promise<number | undefined> {
    if (typeof id !== 'string') return undefined;
    return this.versionAfter(
      'UPDATE users SET session_version = session_version + 1 WHERE id = @id RETURNING session_version',
      { id },
    );
  }

  async setResetToken(id: string, tokenDigest: string, expiresAt: Date): Promise<boolean> {
    if (typeof id !== 'string') return false;
    const result = this.run(() =>
      this.connection
        .prepare('UPDATE users SET reset_digest = ?, reset_expires_at = ? WHERE id = ?')
        .run(tokenDigest, expiresAt.getTime(), id),
    );
    return result.changes === 1;
  }

  /** One UPDATE checks and consumes the token: of two uses of it, only the first finds it still there. */
  async resetPassword(id: string, change: PasswordResetChange): Promise<number | undefined> {
    if (typeof id !== 'string') return undefined;
    return this.versionAfter(
      `UPDATE users SET password_hash = @hash, session_version = session_version + 1,
         reset_digest = NULL, reset_expires_at = NULL
       WHERE id = @id AND reset_digest = @digest AND reset_expires_at > @now
       RETURNING session_version`,
      { id, hash: change.passwordHash, digest: change.tokenDigest, now: change.now.getTime() },
    );
  }

  /** INSERT OR IGNORE on the primary key: of concurrent uses, one inserts its mark. */
  async useInvitation(id: string, expiresAt: Date, now: Date): Promise<boolean> {
    const result = this.run(() =>
      this.connection.write(() => {
        this.connection.prepare('DELETE FROM used_invitations WHERE expires_at <= ?').run(now.getTime());
        return this.connection
          .prepare('INSERT OR IGNORE INTO used_invitations (digest, expires_at) VALUES (?, ?)')
          .run(id, expiresAt.getTime());
      }),
    );
    return result.changes === 1;
  }

  async setRole(id: string, role: UserRole): Promise<User | undefined> {
    if (typeof id !== 'string') return undefined;
    const row = this.run(
      () =>
        this.connection
          .prepare(`UPDATE users SET role = ? WHERE id = ? RETURNING ${columns}`)
          .get(role, id) as UserRow | undefined,
    );
    return row === undefined ? undefined : userMapper.toEntity(row);
  }

  async delete(id: string): Promise<boolean> {
    if (typeof id !== 'string') return false;
    const result = this.run(() => this.connection.prepare('DELETE FROM users WHERE id = ?').run(id));
    return result.changes === 1;
  }

  /** Runs an UPDATE … RETURNING session_version; undefined when it matched no user. */
  private versionAfter(sql: string, parameters: Record<string, unknown>): number | undefined {
    const row = this.run(
      () => this.connection.prepare(sql).get(parameters) as { session_version: number } | undefined,
    );
    return row?.session_version;
  }
}
