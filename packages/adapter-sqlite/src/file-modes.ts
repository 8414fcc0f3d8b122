import { chmodSync, closeSync, constants, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The data file holds the token-signing key and password hashes: only the server's user may read it.
 * SQLite creates the -wal and -shm files with the mode of the database file, so a file created 0600 keeps
 * its companions 0600 too.
 */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;
const COMPANIONS = ['-wal', '-shm', '-journal'];

/**
 * Creates `file` empty with mode 0600 (SQLite takes an empty file as a new database). Creating it before
 * SQLite does closes the window in which another user could open a 0644 file and keep reading through
 * that descriptor. Answers false when the file exists already (nothing is changed then). The chmod makes
 * the mode 0600 whatever the umask is.
 */
export function createPrivateFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, DATA_FILE_MODE);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return false;
    throw error;
  }
  try {
    chmodSync(file, DATA_FILE_MODE);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * What of the data directory and files other users may read or enter: one sentence each, with the
 * command that fixes it. Existing files are not changed behind the operator's back; start warns instead.
 */
export function widePermissions(file: string): string[] {
  if (process.platform === 'win32') return [];
  const found: string[] = [];
  const check = (path: string, allowed: number, fix: string): void => {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      return;
    }
    if ((mode & ~allowed) !== 0) {
      found.push(`${path} is ${octal(mode)}, other users may read it: chmod ${fix} ${path}`);
    }
  };
  check(dirname(file), DATA_DIR_MODE, '700');
  for (const suffix of ['', ...COMPANIONS]) check(file + suffix, DATA_FILE_MODE, '600');
  return found;
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
