import { existsSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';

/** Something start-time work did, for the server's log. */
export interface ServeNote {
  readonly level: 'info' | 'warn';
  readonly event: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** auto_vacuum: 0 none, 1 full, 2 incremental. */
const INCREMENTAL = 2;
/** Room beyond the estimate, for the file's growth meanwhile and the file system's own needs. */
const SLACK_BYTES = 64 * 1024 * 1024;

function bytesOf(file: string): number {
  return ['', '-wal'].reduce(
    (sum, suffix) => sum + (existsSync(file + suffix) ? statSync(file + suffix).size : 0),
    0,
  );
}

function freeBytes(dir: string): number {
  const { bavail, bsize } = statfsSync(dir);
  return bavail * bsize;
}

/** Where SQLite puts VACUUM's temporary copy on Unix: the first of these that exists. */
function sqliteTempDir(): string {
  const candidates = [process.env['SQLITE_TMPDIR'], process.env['TMPDIR'], '/var/tmp', '/usr/tmp', '/tmp'];
  return (
    candidates.find((dir): dir is string => dir !== undefined && dir !== '' && existsSync(dir)) ?? tmpdir()
  );
}

/**
 * Switches a file made without auto_vacuum to auto_vacuum=INCREMENTAL, once: the mode of an existing file
 * changes only with a VACUUM, which rewrites the whole file in one transaction (a crash or a failure
 * leaves the file as it was). It costs the time to rewrite the file, a temporary copy of the file in
 * SQLite's temp directory and, in WAL mode, the whole file once more in the write-ahead log until the
 * checkpoint: so it runs only with that much free space, else it says so and the next start tries again.
 * Other processes may read meanwhile; their writes wait (and may time out) until it is done.
 */
export function switchToIncrementalVacuum(
  db: Database.Database,
  file: string,
  /** Free bytes of the file system holding `dir` (tests pass a full disk). */
  freeIn: (dir: string) => number = freeBytes,
): ServeNote[] {
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL) return [];
  const bytes = bytesOf(file);
  const tempDir = sqliteTempDir();
  const room = [
    { dir: dirname(file), needed: bytes + SLACK_BYTES },
    { dir: tempDir, needed: bytes + SLACK_BYTES },
  ];
  // One file system may hold both: then it needs room for both.
  const sameDevice = statSync(dirname(file)).dev === statSync(tempDir).dev;
  const checks = sameDevice ? [{ dir: dirname(file), needed: 2 * bytes + SLACK_BYTES }] : room;
  for (const { dir, needed } of checks) {
    const free = freeIn(dir);
    if (free < needed) {
      return [
        {
          level: 'warn',
          event: 'data file not switched to incremental vacuum',
          fields: {
            file,
            bytes,
            reason: `${dir} has ${free} bytes free, the one-time rewrite needs ${needed}`,
            hint: 'free space (or set SQLITE_TMPDIR to a roomier directory) and restart; purges do not shrink the file until then',
          },
        },
      ];
    }
  }
  const started = Date.now();
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (error) {
    return [
      {
        level: 'warn',
        event: 'data file not switched to incremental vacuum',
        fields: {
          file,
          bytes,
          reason: error instanceof Error ? error.message : String(error),
          hint: 'the next start tries again (another process writing to the file holds it up)',
        },
      },
    ];
  }
  return [
    {
      level: 'info',
      event: 'data file switched to incremental vacuum',
      fields: { file, bytesBefore: bytes, bytesAfter: bytesOf(file), ms: Date.now() - started },
    },
  ];
}
