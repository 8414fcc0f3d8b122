import { type Db } from 'mongodb';
import { moveEmbeddedCharts } from './history-chart.repository.js';
import { type CollectionSpec, isDuplicateKeyError } from './support.js';
import { addEmailKeys, userCollection } from './user.repository.js';

/** One document per migration applied to the database, by its version (as SQLite's schema_version table). */
export const schemaVersionCollection: CollectionSpec = { name: 'schemaversions', indexes: [] };

interface SchemaVersionDocument {
  _id: number;
  appliedAt: Date;
}

export interface MongoMigration {
  readonly version: number;
  readonly description: string;
  /** Runs before the indexes are made, when an index needs the data in the new shape first. */
  readonly beforeIndexes?: true;
  readonly run: (db: Db) => Promise<unknown>;
}

/**
 * Moves of data written in an older layout (by the original service, or an older Hortus), applied in order
 * at start, each once per database. Each is safe to run twice, so two servers starting together may both
 * run one. Never edit a released migration: add the next one.
 */
export const mongoMigrations: readonly MongoMigration[] = [
  {
    version: 1,
    description: 'users: an emailKey for records without one, before the unique index on it is made',
    beforeIndexes: true,
    run: (db) => addEmailKeys(db.collection(userCollection.name)),
  },
  {
    version: 2,
    description: 'history charts: one revision document per chart, instead of one array per user',
    run: moveEmbeddedCharts,
  },
];

export const MONGO_SCHEMA_VERSION = mongoMigrations.reduce(
  (highest, { version }) => Math.max(highest, version),
  0,
);

/** Applies the migrations of one phase that the database has not had yet; answers their versions. */
export async function applyMigrations(db: Db, phase: 'beforeIndexes' | 'afterIndexes'): Promise<number[]> {
  const versions = db.collection<SchemaVersionDocument>(schemaVersionCollection.name);
  const applied = new Set(
    (await versions.find({}, { projection: { _id: 1 } }).toArray()).map(({ _id }) => _id),
  );
  const ran: number[] = [];
  for (const migration of mongoMigrations) {
    if (applied.has(migration.version)) continue;
    if ((migration.beforeIndexes === true) !== (phase === 'beforeIndexes')) continue;
    await migration.run(db);
    try {
      await versions.insertOne({ _id: migration.version, appliedAt: new Date() });
    } catch (error) {
      // Another server starting at the same time recorded it first.
      if (!isDuplicateKeyError(error)) throw error;
    }
    ran.push(migration.version);
  }
  return ran;
}
