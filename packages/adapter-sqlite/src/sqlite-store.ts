import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ContainerModule } from 'inversify';
import {
  ATTEMPT_COUNTER,
  type AttemptCounter,
  InProcessAttemptCounter,
  bindRepositoryClasses,
  InvalidInputError,
  newRepositories,
  type Repositories,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  type StoreSchema,
  StoreUnavailableError,
} from '@hortus/core';
import { createPrivateFile, DATA_DIR_MODE, widePermissions } from './file-modes.js';
import {
  appliedMigrations,
  checkSchema,
  migrate,
  SCHEMA_VERSION,
  SchemaProblem,
  schemaVersionOf,
} from './schema.js';
import { backUpBeforeUpgrade, type UpgradeBackup } from './upgrade-backup.js';
import { type ServeNote, switchToIncrementalVacuum } from './vacuum.js';
import { sqliteRepositoryClasses } from './repositories.js';
import { DEFAULT_BUSY_TIMEOUT_MS, type SqliteStoreSettings } from './settings.js';
import { isUnavailableError, SQLITE_CONNECTION, SqliteConnection } from './support.js';

function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return oneLine(typeof code === 'string' ? `${message} (${code})` : message);
}

/** A start problem the operator must fix (exit code 2 in the CLI), as one line naming the file. */
function unusable(file: string, problem: string): InvalidInputError {
  return new InvalidInputError(oneLine(`Cannot use the data file ${file}: ${problem}`), [
    { field: 'HORTUS_DATA_DIR', problem: oneLine(problem) },
  ]);
}

function bindRepositories(connection: SqliteConnection, lifecycle: StoreLifecycle): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<SqliteConnection>(SQLITE_CONNECTION).toConstantValue(connection);
    bind<StoreLifecycle>(STORE_LIFECYCLE).toConstantValue(lifecycle);
    bindRepositoryClasses(bind, sqliteRepositoryClasses);
    // One server per file: the log-in and sign-up counts stay in the process.
    bind<AttemptCounter>(ATTEMPT_COUNTER).to(InProcessAttemptCounter).inSingletonScope();
  });
}

/** Every repository of one store, for callers that work without a container (tests, tools). */
export type SqliteRepositories = Repositories;

/**
 * Lifecycle of the embedded store: open the file and migrate its schema at start, report health, back up
 * online, close at shutdown. Several processes may open one file at once (WAL mode): readers never wait,
 * a writer waits up to the busy timeout for another, then the request fails with StoreUnavailableError.
 */
export class SqliteStore implements StoreLifecycle {
  readonly connection = new SqliteConnection();
  private warnings: readonly string[] = [];
  private upgradeBackup: UpgradeBackup | undefined;

  constructor(readonly settings: SqliteStoreSettings) {}

  static fromSettings(settings: SqliteStoreSettings): SqliteStore {
    return new SqliteStore(settings);
  }

  /** A started store. */
  static async open(settings: SqliteStoreSettings): Promise<SqliteStore> {
    const store = new SqliteStore(settings);
    await store.start();
    return store;
  }

  get file(): string {
    return this.settings.file;
  }

  /** The open handle, for tools and tests (pragma checks, EXPLAIN); StoreUnavailableError when closed. */
  get database(): Database.Database {
    return this.connection.database;
  }

  /**
   * Creates the data directory when missing, opens the file (creating it when missing), turns on WAL and
   * runs the forward migrations. Rejects with InvalidInputError, leaving every file as it was, when the
   * directory is not writable, the file is not a SQLite database or not a Hortus one, or its schema is
   * newer than this code; with StoreUnavailableError when another process holds the lock too long.
   */
  async start(): Promise<void> {
    if (this.connection.isOpen) return;
    const file = this.settings.file;
    const inMemory = file === ':memory:';
    if (!inMemory) {
      try {
        mkdirSync(dirname(file), { recursive: true, mode: DATA_DIR_MODE });
      } catch (error) {
        throw unusable(file, `its directory cannot be created: ${reason(error)}`);
      }
      try {
        createPrivateFile(file);
      } catch (error) {
        throw unusable(file, `it cannot be created: ${reason(error)}`);
      }
    }
    let handle: Database.Database;
    try {
      handle = new Database(file, { timeout: this.settings.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    } catch (error) {
      throw unusable(file, `it cannot be opened: ${reason(error)}`);
    }
    try {
      // Reading the schema first proves the file is a Hortus SQLite database before anything is written.
      checkSchema(handle);
      const version = schemaVersionOf(handle);
      // A file of an older schema is copied before its migrations run (docs/upgrading.md).
      if (!inMemory && version !== undefined && version > 0 && version < SCHEMA_VERSION) {
        this.upgradeBackup = await backUpBeforeUpgrade(
          handle,
          file,
          version,
          SCHEMA_VERSION,
          this.settings.freeBytes,
        );
      }
      // A new file frees pages as it goes (see reading deletes); it must be set before the first table.
      if (schemaVersionOf(handle) === undefined) handle.pragma('auto_vacuum = INCREMENTAL');
      if (!inMemory) handle.pragma('journal_mode = WAL');
      handle.pragma(`synchronous = ${this.settings.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
      migrate(handle);
    } catch (error) {
      handle.close();
      throw this.startError(error);
    }
    this.connection.attach(handle);
    this.warnings = inMemory ? [] : widePermissions(file);
  }

  /** What start found that the operator should hear about: data files other users may read. */
  startWarnings(): readonly string[] {
    return this.warnings;
  }

  private startError(error: unknown): Error {
    const file = this.settings.file;
    const code = (error as { code?: unknown } | undefined)?.code;
    if (error instanceof SchemaProblem) return unusable(file, `it ${error.message}`);
    if (code === 'SQLITE_NOTADB') return unusable(file, 'it is not a SQLite database');
    if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
      return new StoreUnavailableError(
        `The data file ${file} stayed locked by another process; try again shortly`,
        { cause: error },
      );
    }
    if (
      typeof code === 'string' &&
      (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN'))
    ) {
      return unusable(file, `it is not writable: ${reason(error)}`);
    }
    if (isUnavailableError(error)) return unusable(file, reason(error));
    return error instanceof Error ? error : new Error(String(error));
  }

  /**
   * One-time work a server does at start, before it listens: a file made before auto_vacuum=INCREMENTAL
   * is rewritten once (VACUUM) so that purges shrink it. CLI commands never do it.
   */
  async prepareToServe(): Promise<readonly ServeNote[]> {
    if (this.settings.file === ':memory:') return [];
    const upgraded = this.upgradeBackup;
    const notes: ServeNote[] =
      upgraded === undefined
        ? []
        : [
            {
              level: 'info',
              event: 'data file backed up before its schema upgrade',
              fields: { ...upgraded },
            },
          ];
    return [...notes, ...(await switchToIncrementalVacuum(this.database, this.settings.file))];
  }

  /** The file's applied migrations, read through a read-only handle when the store is not started. */
  async schema(): Promise<StoreSchema> {
    const read = (db: Database.Database): StoreSchema => {
      const applied = appliedMigrations(db);
      return { version: applied.at(-1)?.version ?? 0, known: SCHEMA_VERSION, applied };
    };
    if (this.connection.isOpen) return read(this.database);
    if (this.settings.file === ':memory:' || !existsSync(this.settings.file)) {
      return { version: 0, known: SCHEMA_VERSION, applied: [] };
    }
    const handle = new Database(this.settings.file, { readonly: true, fileMustExist: true });
    try {
      return read(handle);
    } finally {
      handle.close();
    }
  }

  /** The copy start made before it migrated the file's schema, if it had to. */
  lastUpgradeBackup(): UpgradeBackup | undefined {
    return this.upgradeBackup;
  }

  /** True when the file answers a query. */
  async ping(): Promise<boolean> {
    try {
      this.connection.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Copies the database to `targetFile` with SQLite's online backup while writes go on; the copy is one
   * consistent state. Refuses to overwrite an existing file. The copy's revision counters get new epochs, so
   * restoring it never makes a client's old entity tag match different data.
   */
  async backup(targetFile: string): Promise<{ readonly totalPages: number }> {
    const target = resolve(targetFile);
    // Created here, 0600, so the copy of the signing key and password hashes is never readable by others;
    // the exclusive create also refuses an existing file without a check-then-write race.
    if (!createPrivateFile(target)) {
      throw InvalidInputError.forField('file', `${target} exists already; choose a new file name`);
    }
    let metadata: Database.BackupMetadata;
    try {
      metadata = await this.database.backup(target);
      const copy = new Database(target);
      try {
        copy.exec('UPDATE revisions SET epoch = lower(hex(randomblob(6)))');
      } finally {
        copy.close();
      }
    } catch (error) {
      // A half-written copy is worse than none; it is ours to remove, as the name was free.
      rmSync(target, { force: true });
      for (const suffix of ['-wal', '-shm', '-journal']) rmSync(target + suffix, { force: true });
      if (isUnavailableError(error)) throw new StoreUnavailableError(undefined, { cause: error });
      throw error;
    }
    return { totalPages: metadata.totalPages };
  }

  /** Every repository port and this store's lifecycle: what the composition root loads to choose SQLite. */
  module(): ContainerModule {
    return bindRepositories(this.connection, this);
  }

  repositories(): SqliteRepositories {
    return newRepositories(sqliteRepositoryClasses, this.connection);
  }

  /** Closes the file (the last process to close it folds the write-ahead log back in). Safe to repeat. */
  async close(): Promise<void> {
    this.connection.detach()?.close();
  }
}
