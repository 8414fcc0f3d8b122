import { inject, injectable } from 'inversify';
import { type Db, ObjectId } from 'mongodb';
import { type Group, type GroupPackage, type GroupRepository, type NewGroup } from '@hortus/core';
import { StoredRevisions } from './revisions.js';
import { type CollectionSpec, fromStoredJson, MONGO_DB, MongoRepository, toStoredJson } from './support.js';

interface GroupDocument {
  _id: ObjectId;
  name: string;
  package: GroupPackage;
  employee: string[];
  settings: unknown;
}

export const groupCollection: CollectionSpec = {
  name: 'groups',
  indexes: [{ key: { name: 1 }, name: 'name_unique', unique: true }],
};

const groupMapper = {
  toDocument(group: NewGroup): GroupDocument {
    return {
      _id: new ObjectId(),
      name: group.name,
      package: group.package,
      employee: [...group.employee],
      settings: toStoredJson(group.settings),
    };
  },
  toEntity(document: GroupDocument): Group {
    return {
      id: document._id.toHexString(),
      name: document.name,
      package: document.package,
      employee: Array.isArray(document.employee) ? document.employee.map(String) : [],
      settings: fromStoredJson(document.settings),
    };
  },
};

@injectable()
export class MongoGroupRepository extends MongoRepository<GroupDocument> implements GroupRepository {
  private readonly revisions: StoredRevisions;

  constructor(@inject(MONGO_DB) db: Db) {
    super(db, groupCollection, 'group', 'A group with that name exists');
    this.revisions = new StoredRevisions(db, 'group');
  }

  async create(group: NewGroup): Promise<Group> {
    const document = groupMapper.toDocument(group);
    await this.run(() => this.collection.insertOne(document));
    await this.run(() => this.revisions.bump([document.name]));
    return groupMapper.toEntity(document);
  }

  async revision(name: string): Promise<string> {
    return this.run(() => this.revisions.current(name));
  }

  async findByName(name: string): Promise<Group | undefined> {
    const document = await this.run(() => this.collection.findOne({ name }));
    return document === null ? undefined : groupMapper.toEntity(document);
  }

  async list(): Promise<Group[]> {
    const documents = await this.run(() => this.collection.find({}).sort({ name: 1 }).toArray());
    return documents.map(groupMapper.toEntity);
  }

  async replaceSettings(name: string, settings: unknown): Promise<Group | undefined> {
    const document = await this.run(() =>
      this.collection.findOneAndUpdate(
        { name },
        { $set: { settings: toStoredJson(settings) } },
        { returnDocument: 'after' },
      ),
    );
    if (document === null) return undefined;
    await this.run(() => this.revisions.bump([name]));
    return groupMapper.toEntity(document);
  }
}
