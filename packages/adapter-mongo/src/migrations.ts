import { type Db } from 'mongodb';
import { InvalidInputError, type StoreSchema } from '@hortus/core';
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

/** The migrations recorded in the database, oldest first. */
export async function appliedMongoMigrations(db: Db): Promise<StoreSchema> {
  const documents = await db
    .collection<SchemaVersionDocument>(schemaVersionCollection.name)
    .find({})
    .sort({ _id: 1 })
    .toArray();
  const applied = documents.map(({ _id, appliedAt }) => ({ version: _id, appliedAt }));
  return { version: applied.at(-1)?.version ?? 0, known: MONGO_SCHEMA_VERSION, applied };
}

/**
 * Refuses, before any index or migration touches it, a database a newer Hortus has migrated: this code
 * would read and write a layout it does not know (SQLite refuses such a file the same way).
 */
export async function refuseNewerDatabase(db: Db): Promise<void> {
  const { version, known } = await appliedMongoMigrations(db);
  if (version > known) {
    throw InvalidInputError.forField(
      'MONGODB_URI',
      `the database ${db.databaseName} was written by a newer Hortus (migration ${version}; this one ` +
        `knows up to ${known}): start the newer Hortus, or restore a backup made before the upgrade`,
    );
  }
}
