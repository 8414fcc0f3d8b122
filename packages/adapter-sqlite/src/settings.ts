// The store's settings from the environment: a module of its own, so reading the configuration does not load
// the SQLite driver (the CLI reads it for every command).
import { join, resolve } from 'node:path';
import { type Env, InvalidInputError } from '@hortus/core';

export const DEFAULT_DATA_DIR = './data';
export const DATA_FILE_NAME = 'hortus.db';
/** How long a write waits for another process's write (the CLI beside the server) before answering 503. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * `full` (the default) syncs the write-ahead log at every commit, so an acknowledged write survives a power
 * cut too; `normal` syncs only at checkpoints: still safe when the process crashes, faster on slow cards,
 * but a power cut may take the last commits back.
 */
export type SqliteSynchronous = 'full' | 'normal';

export interface SqliteStoreSettings {
  /** The database file; its directory is created when missing. */
  readonly file: string;
  readonly busyTimeoutMs?: number;
  readonly synchronous?: SqliteSynchronous;
  /** Free bytes in a directory, checked before the copy a schema upgrade makes; tests replace the disk's. */
  readonly freeBytes?: (dir: string) => number;
}

/** Reads HORTUS_DATA_DIR (default ./data), HORTUS_SQLITE_BUSY_TIMEOUT_MS and HORTUS_SQLITE_SYNCHRONOUS. */
export function sqliteSettingsFromEnv(env: Env): SqliteStoreSettings {
  const dataDir = env['HORTUS_DATA_DIR']?.trim() || DEFAULT_DATA_DIR;
  const timeout = env['HORTUS_SQLITE_BUSY_TIMEOUT_MS']?.trim();
  const synchronous = env['HORTUS_SQLITE_SYNCHRONOUS']?.trim().toLowerCase();
  if (timeout !== undefined && timeout !== '' && !/^\d{1,7}$/u.test(timeout)) {
    throw InvalidInputError.forField(
      'HORTUS_SQLITE_BUSY_TIMEOUT_MS',
      'must be a whole number of milliseconds',
    );
  }
  if (synchronous !== undefined && synchronous !== '' && synchronous !== 'full' && synchronous !== 'normal') {
    throw InvalidInputError.forField('HORTUS_SQLITE_SYNCHRONOUS', 'must be "full" or "normal"');
  }
  return {
    file: dataFileIn(dataDir),
    ...(timeout === undefined || timeout === '' ? {} : { busyTimeoutMs: Number(timeout) }),
    ...(synchronous === undefined || synchronous === '' ? {} : { synchronous }),
  };
}

/** The file a data directory holds. */
export function dataFileIn(dataDir: string): string {
  return join(resolve(dataDir), DATA_FILE_NAME);
}
