import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import { type EngineState, type EngineStateRepository, type EngineValue } from '@hortus/core';
import {
  type CollectionSpec,
  fromStoredJson,
  isDuplicateKeyError,
  MONGO_DATABASE,
  MongoRepository,
  toDate,
  toStoredJson,
} from './support.js';
import { type MongoDatabase } from './database.js';

/**
 * One document per written version of a key. A compare-and-set inserts the next version and the unique
 * (key, version) index lets exactly one writer have it: exactly-once rests on a unique index, not on
 * the isolation of updates, so it also holds on FerretDB v1, whose updates are not isolated.
 */
interface EngineStateDocument {
  _id: ObjectId;
  key: string;
  version: number;
  value: Record<string, unknown>;
  updatedAt: Date;
}

export const engineStateCollection: CollectionSpec = {
  name: 'enginestate',
  indexes: [
    // Arbitrates each version and finds a key's newest version first.
    { key: { key: 1, version: -1 }, name: 'key_version_unique', unique: true },
    { key: { updatedAt: 1 }, name: 'updatedAt' },
  ],
};

const engineStateMapper = {
  toDocument(key: string, version: number, value: EngineValue, at: Date): EngineStateDocument {
    return {
      _id: new ObjectId(),
      key,
      version,
      value: toStoredJson(value) as Record<string, unknown>,
      updatedAt: new Date(at.getTime()),
    };
  },
  toEntity(document: EngineStateDocument): EngineState {
    return {
      version: Number(document.version),
      value: fromStoredJson(document.value) as EngineValue,
      updatedAt: toDate(document.updatedAt),
    };
  },
};

@injectable()
export class MongoEngineStateRepository
  extends MongoRepository<EngineStateDocument>
  implements EngineStateRepository
{
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, engineStateCollection, 'action', 'Another writer stored that engine state version first');
  }

  async get(key: string): Promise<EngineState | undefined> {
    const document = await this.newest(key);
    return document === null ? undefined : engineStateMapper.toEntity(document);
  }

  async compareAndSet(key: string, expectedVersion: number, value: EngineValue, at: Date): Promise<boolean> {
    const current = await this.newest(key);
    if ((current?.version ?? 0) !== expectedVersion) return false;
    return this.run(async () => {
      try {
        await this.collection.insertOne(engineStateMapper.toDocument(key, expectedVersion + 1, value, at));
        // The older versions have done their part (a stale writer now loses on the newest one): dropping
        // them keeps one document per key, however often it is advanced (checkpoints, the last run).
        if (expectedVersion > 0) {
          await this.collection.deleteMany({ key, version: { $lte: expectedVersion } });
        }
        return true;
      } catch (error) {
        // Another writer inserted that version first: the "lost the race" answer, not a failure.
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    });
  }

  /** A key's newest version is its state: older ones may linger until the next write drops them. */
  async list(): Promise<{ key: string; state: EngineState }[]> {
    const documents = await this.run(() => this.collection.find({}).sort({ key: 1, version: -1 }).toArray());
    const newest = new Map<string, EngineStateDocument>();
    for (const document of documents) {
      const known = newest.get(document.key);
      if (known === undefined || document.version > known.version) newest.set(document.key, document);
    }
    return [...newest.keys()]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((key) => ({ key, state: engineStateMapper.toEntity(newest.get(key) as EngineStateDocument) }));
  }

  async restore(key: string, state: EngineState): Promise<void> {
    await this.run(() => this.collection.deleteMany({ key }));
    await this.run(() =>
      this.collection.insertOne(
        engineStateMapper.toDocument(key, state.version, state.value, state.updatedAt),
      ),
    );
  }

  async purgeBefore(before: Date): Promise<number> {
    const result = await this.run(() => this.collection.deleteMany({ updatedAt: { $lt: before } }));
    return result.deletedCount;
  }

  private async newest(key: string): Promise<EngineStateDocument | null> {
    return this.run(() => this.collection.findOne({ key }, { sort: { version: -1 } }));
  }
}
