import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

/**
 * Whether another process has the data file open (a running `hortus serve`, another command). In WAL mode
 * every open connection holds a shared lock on the file, so an exclusive lock is refused while anyone else
 * has it open. Nothing is written and the journal mode stays; a file that cannot be read counts as not in use.
 */
export function sqliteFileInUse(file: string): boolean {
  if (!existsSync(file)) return false;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return false;
  } catch (error) {
    const code = String((error as { code?: unknown }).code);
    return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
  } finally {
    db?.close();
  }
}
