import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { type NewReading } from '@hortus/core';
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

export const GROUP = 'greenhouse-a';
export const TOPIC = 'esp/air/temperature';
export const BASE = Date.UTC(2024, 4, 1);
export const MINUTE = 60_000;

export function readings(count: number, { from = 0, topic = TOPIC, stepMs = 20_000 } = {}): NewReading[] {
  return Array.from({ length: count }, (_, i) => ({
    group: GROUP,
    topic,
    value: (i % 41) / 2,
    time: new Date(BASE + (from + i) * stepMs),
  }));
}

export function count(db: Database.Database, table: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/**
 * Call inside a describe: `open` starts a store on a new file and `newDir` makes a directory; both are
 * closed and removed after each test.
 */
export function useTempStores(): {
  open: (settings?: Partial<SqliteStoreSettings>) => Promise<TestStore>;
  newDir: () => string;
} {
  const opened: TestStore[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.dispose();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    open: async (settings = {}) => {
      const store = await openTestStore(settings);
      opened.push(store);
      return store;
    },
    newDir: () => {
      const dir = tempDir();
      dirs.push(dir);
      return dir;
    },
  };
}
