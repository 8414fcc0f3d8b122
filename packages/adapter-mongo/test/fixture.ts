import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { type Context } from 'mocha';
import { collections, type MongoRepositories, MongoStore } from '@hortus/adapter-mongo';

/** The server the Mongo suites run against; scripts/test.sh sets it (FerretDB when nothing else is given). */
export const mongoUri: string | undefined = process.env['MONGODB_URI']?.trim() || undefined;

/** A suite title that says why the suite is skipped when no server is configured. */
export function serverSuite(title: string): string {
  return mongoUri === undefined ? `${title} (skipped: MONGODB_URI is not set)` : title;
}

export interface TestDatabase {
  readonly store: MongoStore;
  readonly repositories: MongoRepositories;
  /** Empties every collection, keeping the indexes. */
  clear(): Promise<void>;
}

/**
 * Call inside a describe: opens a database of its own for the suite (`hortus_test_<random>`), started
 * like production (indexes ensured), and drops it afterwards. Without MONGODB_URI the suite is skipped.
 */
export function useTestDatabase(): () => TestDatabase {
  let database: TestDatabase | undefined;
  before(async function (this: Context) {
    if (mongoUri === undefined) this.skip();
    this.timeout(20_000);
    const store = MongoStore.fromSettings({
      uri: mongoUri,
      dbName: `hortus_test_${randomBytes(6).toString('hex')}`,
      // The contract suites test what is stored, not outages. FerretDB serialises writes, so their twenty
      // concurrent adds took 4.8 s on a loaded test machine: past the 2 s production deadline.
      operationTimeoutMS: 30_000,
    });
    await store.start();
    database = {
      store,
      repositories: store.repositories(),
      clear: async () => {
        await Promise.all(collections.map(({ name }) => store.db.collection(name).deleteMany({})));
        // Nothing else removes revision counters: the mirror would notice only at its next full read.
        store.database.stopRevisionMirror();
      },
    };
  });
  after(async function (this: Context) {
    this.timeout(20_000);
    const opened = database;
    database = undefined;
    if (opened === undefined) return;
    try {
      await opened.store.db.dropDatabase();
    } finally {
      await opened.store.close();
    }
  });
  return () => {
    if (database === undefined) throw new Error('The test database is only open inside its suite');
    return database;
  };
}

/** Rejects with whatever `promise` rejects with, and reports how long that took. */
export async function rejectionOf(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('expected a rejection');
}
