import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { ConflictError, type ResourceName, StoreUnavailableError } from '@hortus/core';
import { RevisionCache } from './revision-cache.js';

/** Token of the SqliteConnection the repositories share. */
export const SQLITE_CONNECTION = Symbol.for('hortus.sqlite.Connection');

/**
 * The one database handle of a store, opened by SqliteStore.start(). Repositories are built before the
 * store starts (a container may be composed first), so they reach the handle through this holder, and
 * their prepared statements are cached here, once per SQL text.
 */
export class SqliteConnection {
  private handle: Database.Database | undefined;
  private readonly statements = new Map<string, Database.Statement>();
  private transaction: Database.Transaction<(work: () => unknown) => unknown> | undefined;
  /** What SqliteRevisions read through this handle; a poll finds it without touching the handle. */
  readonly revisionCache = new RevisionCache();

  get database(): Database.Database {
    if (this.handle === undefined || !this.handle.open) {
      throw new StoreUnavailableError('The SQLite store is not open');
    }
    return this.handle;
  }

  get isOpen(): boolean {
    return this.handle?.open === true;
  }

  attach(handle: Database.Database): void {
    this.handle = handle;
    this.statements.clear();
    this.revisionCache.reset();
    this.transaction = handle.transaction((work: () => unknown) => work());
  }

  detach(): Database.Database | undefined {
    const handle = this.handle;
    this.handle = undefined;
    this.transaction = undefined;
    this.statements.clear();
    this.revisionCache.reset();
    return handle;
  }

  /** The SQL of every statement prepared so far (tests check their query plans). */
  get preparedSql(): string[] {
    return [...this.statements.keys()];
  }

  prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `work` in one write transaction that takes the write lock at BEGIN (IMMEDIATE): a transaction
   * that read first and upgraded later could fail at once with SQLITE_BUSY when another process writes,
   * whereas BEGIN IMMEDIATE waits up to the busy timeout. Its answer is returned after COMMIT.
   */
  write<T>(work: () => T): T {
    const transaction = this.transaction;
    if (transaction === undefined || this.handle?.open !== true) {
      throw new StoreUnavailableError('The SQLite store is not open');
    }
    return transaction.immediate(work) as T;
  }
}

// SQLite's primary result codes that mean "the store cannot do this right now", not "the request is bad".
const UNAVAILABLE_CODES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_PROTOCOL',
  'SQLITE_NOMEM',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
] as const;

function sqliteCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Extended codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT, ...) count as their primary code. */
export function isUnavailableError(error: unknown): boolean {
  const code = sqliteCode(error);
  if (code !== undefined) {
    return UNAVAILABLE_CODES.some((primary) => code === primary || code.startsWith(`${primary}_`));
  }
  // better-sqlite3 throws a TypeError when a closed handle is used (a request racing shutdown).
  return error instanceof TypeError && /database connection is not open/iu.test(error.message);
}

/** Domain errors pass through; SQLite errors become the domain error callers can act on. */
export function toDomainError(error: unknown, resource: ResourceName, conflictMessage: string): unknown {
  if (isUniqueViolation(error)) return new ConflictError(resource, conflictMessage);
  if (isUnavailableError(error)) {
    const code = sqliteCode(error);
    return new StoreUnavailableError(
      code === 'SQLITE_FULL' ? 'The data store is full, free some disk space' : undefined,
      { cause: error },
    );
  }
  return error;
}

/** Shared by every repository: the connection, and SQLite errors translated on the way out. */
export abstract class SqliteRepository {
  protected constructor(
    protected readonly connection: SqliteConnection,
    private readonly resource: ResourceName,
    private readonly conflictMessage: string,
  ) {}

  /** Runs synchronous work; what it throws leaves as a rejection of the calling async method. */
  protected run<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw toDomainError(error, this.resource, this.conflictMessage);
    }
  }
}

// ObjectId-like: seconds (8 hex) + 64 random bits (16 hex). Several processes write one file, so no
// per-process counter; creation order comes from each table's integer key, not from the id.
export function newId(): string {
  return (
    Math.floor(Date.now() / 1000)
      .toString(16)
      .padStart(8, '0') + randomBytes(8).toString('hex')
  );
}

/** Free-form JSON as stored; `undefined` (absent) is SQL NULL, distinct from the JSON text `null`. */
export function toJson(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export function fromJson(text: unknown): unknown {
  return typeof text === 'string' ? (JSON.parse(text) as unknown) : undefined;
}

export function toStringList(text: unknown): string[] {
  const value = fromJson(text);
  return Array.isArray(value) ? value.map(String) : [];
}
