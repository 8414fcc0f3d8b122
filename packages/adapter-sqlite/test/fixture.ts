import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore, type SqliteStoreSettings } from '@hortus/adapter-sqlite';

export interface TestStore {
  readonly store: SqliteStore;
  readonly dir: string;
  readonly file: string;
  /** Closes the store and removes its directory. */
  dispose(): Promise<void>;
}

/** A new temporary directory for a test's files; remove it with `rmSync(dir, { recursive: true })`. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'hortus-sqlite-'));
}

/** A started store on a new file in a new temporary directory. */
export async function openTestStore(settings: Partial<SqliteStoreSettings> = {}): Promise<TestStore> {
  const dir = tempDir();
  const file = join(dir, 'hortus.db');
  const store = await SqliteStore.open({ file, ...settings });
  return {
    store,
    dir,
    file,
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
