import { existsSync, rmSync, statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { createPrivateFile } from './file-modes.js';
import { SchemaProblem } from './schema.js';

/** Room kept free beyond the copy and the migration's growth: a full card stops the server, not only Hortus. */
export const UPGRADE_ROOM_MARGIN_BYTES = 32 * 1024 * 1024;

/** Bytes an unprivileged process may still write in `dir` (statfs); a test replaces it. */
export type FreeBytes = (dir: string) => number;

export const freeBytesOf: FreeBytes = (dir) => {
  const stats = statfsSync(dir);
  return Number(stats.bavail) * Number(stats.bsize);
};

/** What the copy before a schema upgrade was: where, from which version to which, how big. */
export interface UpgradeBackup {
  readonly file: string;
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly bytes: number;
  readonly ms: number;
}

function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** `hortus.db.schema-13-20261129T011500.123Z.bak`: beside the data file, named by the version it holds. */
export function upgradeBackupName(file: string, fromVersion: number, at: Date): string {
  return `${file}.schema-${fromVersion}-${at.toISOString().replace(/[-:]/gu, '')}.bak`;
}

/**
 * Copies the data file (SQLite's online backup, the WAL's content included) beside it before migrations
 * change it, so an upgrade can be undone by stopping the server and putting the copy back. Refuses, with
 * nothing written, when the directory has less free room than the copy, as much again for the migration's
 * rewrite of tables, and UPGRADE_ROOM_MARGIN_BYTES: on an SD card a full disk would stop more than Hortus.
 */
export async function backUpBeforeUpgrade(
  handle: Database.Database,
  file: string,
  fromVersion: number,
  toVersion: number,
  freeBytes: FreeBytes = freeBytesOf,
): Promise<UpgradeBackup> {
  const started = performance.now();
  const size = sizeOf(file) + sizeOf(`${file}-wal`);
  const needed = 2 * size + UPGRADE_ROOM_MARGIN_BYTES;
  const free = freeBytes(dirname(file));
  if (free < needed) {
    throw new SchemaProblem(
      `needs an upgrade from schema version ${fromVersion} to ${toVersion}, and Hortus backs the file up ` +
        `first: that needs ${megabytes(needed)} free in ${dirname(file)} (twice the file's ` +
        `${megabytes(size)} and ${megabytes(UPGRADE_ROOM_MARGIN_BYTES)} to spare), and ${megabytes(free)} ` +
        'is free. Free some room (old backups, logs) and start again; nothing was changed',
    );
  }
  const target = upgradeBackupName(file, fromVersion, new Date());
  if (!createPrivateFile(target)) throw new SchemaProblem(`cannot be backed up: ${target} exists already`);
  try {
    await handle.backup(target);
  } catch (error) {
    rmSync(target, { force: true });
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(target + suffix, { force: true });
    throw error;
  }
  return {
    file: target,
    fromVersion,
    toVersion,
    bytes: sizeOf(target),
    ms: Math.round(performance.now() - started),
  };
}

function megabytes(bytes: number): string {
  return `${Math.ceil(bytes / (1024 * 1024))} MB`;
}
