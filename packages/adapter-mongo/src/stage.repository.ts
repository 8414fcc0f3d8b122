import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type NewStageAssignment,
  type Recipe,
  type StageAssignment,
  type StageRepository,
} from '@hortus/core';
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
 * One document per written version of a group's assignment, as the engine state: the unique (group,
 * version) index lets exactly one writer store each version, also on FerretDB, whose updates are not
 * isolated. Older versions are dropped once a newer one is in.
 */
interface StageDocument {
  _id: ObjectId;
  group: string;
  version: number;
  recipe: unknown;
  stage: string;
  startedAt: Date;
  applied: boolean;
  appliedAt?: Date;
}

export const stageCollection: CollectionSpec = {
  name: 'groupstages',
  indexes: [{ key: { group: 1, version: -1 }, name: 'group_version_unique', unique: true }],
};

const stageMapper = {
  toDocument(assignment: NewStageAssignment, version: number): StageDocument {
    return {
      _id: new ObjectId(),
      group: assignment.group,
      version,
      recipe: toStoredJson(assignment.recipe),
      stage: assignment.stage,
      startedAt: new Date(assignment.startedAt.getTime()),
      applied: assignment.applied,
      ...(assignment.appliedAt === undefined ? {} : { appliedAt: new Date(assignment.appliedAt.getTime()) }),
    };
  },
  toEntity(document: StageDocument): StageAssignment {
    return {
      group: document.group,
      recipe: fromStoredJson(document.recipe) as Recipe,
      stage: document.stage,
      startedAt: toDate(document.startedAt),
      applied: document.applied === true,
      ...(document.appliedAt === undefined || document.appliedAt === null
        ? {}
        : { appliedAt: toDate(document.appliedAt) }),
      version: Number(document.version),
    };
  },
};

@injectable()
export class MongoStageRepository extends MongoRepository<StageDocument> implements StageRepository {
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, stageCollection, 'group', 'Another writer changed the stage first');
  }

  async get(group: string): Promise<StageAssignment | undefined> {
    const document = await this.newest(group);
    return document === null ? undefined : stageMapper.toEntity(document);
  }

  async compareAndSet(assignment: NewStageAssignment, expectedVersion: number): Promise<boolean> {
    const current = await this.newest(assignment.group);
    if ((current?.version ?? 0) !== expectedVersion) return false;
    return this.run(async () => {
      try {
        await this.collection.insertOne(stageMapper.toDocument(assignment, expectedVersion + 1));
        if (expectedVersion > 0)
          await this.collection.deleteMany({ group: assignment.group, version: { $lte: expectedVersion } });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    });
  }

  async delete(group: string): Promise<boolean> {
    const result = await this.run(() => this.collection.deleteMany({ group }));
    return result.deletedCount > 0;
  }

  async list(): Promise<StageAssignment[]> {
    const documents = await this.run(() =>
      this.collection.find({}).sort({ group: 1, version: -1 }).toArray(),
    );
    const newest = new Map<string, StageDocument>();
    for (const document of documents) {
      const known = newest.get(document.group);
      if (known === undefined || document.version > known.version) newest.set(document.group, document);
    }
    return [...newest.keys()]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((group) => stageMapper.toEntity(newest.get(group) as StageDocument));
  }

  private async newest(group: string): Promise<StageDocument | null> {
    return this.run(() => this.collection.findOne({ group }, { sort: { version: -1 } }));
  }
}
