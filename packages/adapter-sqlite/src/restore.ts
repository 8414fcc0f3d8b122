import { copyFileSync, chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ForbiddenError, InvalidInputError } from '@hortus/core';
import { createPrivateFile, DATA_DIR_MODE, DATA_FILE_MODE } from './file-modes.js';
import { SCHEMA_VERSION, schemaVersionOf } from './schema.js';

const COMPANIONS = ['-wal', '-shm', '-journal'];

export interface RestoreReport {
  /** The copy that was put in place. */
  readonly from: string;
  /** The data file it now is. */
  readonly file: string;
  /** Where the data file that was there went (undefined when there was none). */
  readonly kept?: string;
  readonly schemaVersion: number;
  readonly integrity: 'ok';
  /** Alert messages the copy still had to send, cancelled (see cancelPendingMessages). */
  readonly cancelledMessages: number;
}

/** The schema version that made the alert outbox. */
const OUTBOX_VERSION = 6;
export const RESTORE_CANCEL_REASON = 'cancelled by hortus restore: queued before the backup was made';

/**
 * A copy's pending alert messages were queued before the backup: the server that ran on after it sent
 * them (or gave them up) already, or they speak of a state that is long past. Sent again after a restore,
 * the grower would get yesterday's alerts twice. They are cancelled (kept, with the reason, secrets blanked
 * as any cancelled message's), and the engine's first tick raises what is still true now.
 */
function cancelPendingMessages(db: Database.Database, version: number): number {
  if (version < OUTBOX_VERSION) return 0;
  return db
    .prepare(
      `UPDATE outbox SET status = 'cancelled', last_error = ?,
         channel = CASE WHEN json_extract(channel, '$.type') = 'webhook'
           THEN json_set(channel, '$.secret', '') ELSE channel END
       WHERE status = 'pending'`,
    )
    .run(RESTORE_CANCEL_REASON).changes;
}

/** A file name part from a time that sorts and is valid everywhere: 2026-11-26T05-30-00-123Z. */
export function fileStamp(at: Date): string {
  return at.toISOString().replace(/:/gu, '-').replace('.', '-');
}

/**
 * Checks a copy (a file `hortus backup` made) and reads its schema version: a sound SQLite file of
 * Hortus's schema, no newer than this code. Throws InvalidInputError naming the problem.
 */
function checkCopy(path: string, shown: string): { version: number; cancelledMessages: number } {
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (error) {
    throw InvalidInputError.forField('file', `${shown} cannot be opened: ${String(error)}`);
  }
  try {
    let integrity: unknown;
    try {
      integrity = db.pragma('integrity_check', { simple: true });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const problem =
        code === 'SQLITE_NOTADB' ? 'is not a SQLite database' : `cannot be read (${String(code)})`;
      throw InvalidInputError.forField('file', `${shown} ${problem}`);
    }
    if (integrity !== 'ok') {
      throw InvalidInputError.forField(
        'file',
        `${shown} fails SQLite's integrity check: ${String(integrity)}`,
      );
    }
    const version = schemaVersionOf(db);
    if (version === undefined || version === 0) {
      throw InvalidInputError.forField('file', `${shown} is a SQLite database but not a Hortus one`);
    }
    if (version > SCHEMA_VERSION) {
      throw InvalidInputError.forField(
        'file',
        `${shown} was written by a newer Hortus (schema version ${version}; this one knows up to ${SCHEMA_VERSION})`,
      );
    }
    // New epochs, as `hortus backup` gives its copy: an entity tag a client got before never matches the
    // restored data, even when the same copy is restored twice.
    db.exec('UPDATE revisions SET epoch = lower(hex(randomblob(6)))');
    return { version, cancelledMessages: cancelPendingMessages(db, version) };
  } finally {
    db.close();
  }
}

/**
 * Takes the data file for this process alone: in WAL mode every open connection (a server, another
 * command) holds a shared lock on the file, so an exclusive lock is granted only when no one else has it
 * open. Then folds the write-ahead log into the file and leaves WAL mode, so the file stands alone once
 * closed. Throws ForbiddenError (exit 7) when another process has it open.
 */
function takeAlone(file: string): void {
  const db = new Database(file, { timeout: 500 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('journal_mode = DELETE');
  } catch (error) {
    const code = String((error as { code?: unknown }).code);
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      throw new ForbiddenError(
        `${file} is in use (a running hortus serve or another hortus command has it open); stop it first`,
      );
    }
    // A damaged data file (the reason for many a restore) is no server's: it is kept as it is.
    if (!code.startsWith('SQLITE_NOTADB') && !code.startsWith('SQLITE_CORRUPT')) throw error;
  } finally {
    db.close();
  }
}

/**
 * Puts `from` in place of the data file `file`: refuses while another process has the data file open,
 * checks a private copy of `from` (integrity, Hortus schema no newer than this code), keeps the old data
 * file as `<file>.before-restore-<time>` (with any companion file renamed alike), then moves the checked
 * copy in, mode 0600. The copy is checked before anything is renamed, and the last step is one rename in
 * the data directory, so a failure leaves the old file in place.
 */
export function restoreSqliteFile(file: string, from: string, now: Date = new Date()): RestoreReport {
  const target = resolve(file);
  const source = resolve(from);
  if (!existsSync(source) || !statSync(source).isFile()) {
    throw InvalidInputError.forField('file', `${from} does not exist or is not a file`);
  }
  const log = `${source}-wal`;
  if (existsSync(log) && statSync(log).size > 0) {
    // Its newest writes are in that log, which a copy of the file alone would lose.
    throw InvalidInputError.forField(
      'file',
      `${from} has a write-ahead log beside it (${log}): it is in use or was not closed cleanly; restore a copy made by hortus backup`,
    );
  }
  if (source === target) {
    throw InvalidInputError.forField('file', `${from} is the data file itself; name a copy`);
  }
  const dir = dirname(target);
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  const stamp = fileStamp(now);
  const staged = join(dir, `${basename(target)}.restoring-${stamp}`);
  if (!createPrivateFile(staged)) {
    throw InvalidInputError.forField('file', `${staged} exists already; try again`);
  }
  let kept: string | undefined;
  try {
    // The check runs on a private copy: the named file is never written, and what is checked is what
    // goes in place.
    copyFileSync(source, staged);
    chmodSync(staged, DATA_FILE_MODE);
    const { version: schemaVersion, cancelledMessages } = checkCopy(staged, from);
    if (existsSync(target)) {
      takeAlone(target);
      kept = `${target}.before-restore-${stamp}`;
      renameSync(target, kept);
      // The log is folded in and the file left WAL mode, so a -shm (a crashed server's) indexes nothing.
      rmSync(`${target}-shm`, { force: true });
      for (const suffix of COMPANIONS) {
        if (existsSync(target + suffix)) renameSync(target + suffix, kept + suffix);
      }
    }
    renameSync(staged, target);
    return {
      from: source,
      file: target,
      ...(kept === undefined ? {} : { kept }),
      schemaVersion,
      integrity: 'ok',
      cancelledMessages,
    };
  } finally {
    rmSync(staged, { force: true });
    for (const suffix of COMPANIONS) rmSync(staged + suffix, { force: true });
  }
}
