import { inject, injectable } from 'inversify';
import { type Collection, ObjectId } from 'mongodb';
import { type Group, type GroupPackage, type GroupRepository, type NewGroup } from '@hortus/core';
import { StoredRevisions } from './revisions.js';
import {
  type CollectionSpec,
  copiedObjectId,
  fromStoredJson,
  MONGO_DATABASE,
  MongoRepository,
  toStoredJson,
} from './support.js';
import { type MongoDatabase } from './database.js';

interface GroupDocument {
  _id: ObjectId;
  name: string;
  package: GroupPackage;
  /** The original service also stored it as one comma-separated text. */
  employee: string[] | string;
  settings: unknown;
  /** The operator's retention override in days (0: forever); absent follows RETENTION_DAYS. */
  retentionDays?: number;
}

function employeeList(stored: unknown): string[] {
  if (Array.isArray(stored)) return stored.map(String);
  if (typeof stored === 'string') {
    return stored
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
  }
  return [];
}

export const groupCollection: CollectionSpec = {
  name: 'groups',
  indexes: [{ key: { name: 1 }, name: 'name_unique', unique: true }],
};

/** An employee added to a group after it was created (at sign-up): one document per addition. */
interface GroupEmployeeDocument {
  _id: ObjectId;
  group: string;
  employee: string;
}

export const groupEmployeeCollection: CollectionSpec = {
  name: 'groupemployees',
  indexes: [{ key: { group: 1, _id: 1 }, name: 'group_id' }],
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
      employee: employeeList(document.employee),
      settings: fromStoredJson(document.settings),
      ...(typeof document.retentionDays === 'number' ? { retentionDays: document.retentionDays } : {}),
    };
  },
};

@injectable()
export class MongoGroupRepository extends MongoRepository<GroupDocument> implements GroupRepository {
  private readonly revisions: StoredRevisions;
  private readonly employees: Collection<GroupEmployeeDocument>;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, groupCollection, 'group', 'A group with that name exists');
    this.revisions = new StoredRevisions(db, 'group');
    this.employees = db.collection<GroupEmployeeDocument>(groupEmployeeCollection.name);
  }

  async create(group: NewGroup): Promise<Group> {
    const document = groupMapper.toDocument(group);
    await this.run(() => this.collection.insertOne(document));
    await this.run(() => this.revisions.bump([document.name]));
    return groupMapper.toEntity(document);
  }

  async setRetention(name: string, days: number | undefined): Promise<Group | undefined> {
    const document = await this.run(() =>
      this.collection.findOneAndUpdate(
        { name },
        days === undefined ? { $unset: { retentionDays: '' } } : { $set: { retentionDays: days } },
        { returnDocument: 'after' },
      ),
    );
    if (document === null) return undefined;
    await this.run(() => this.revisions.bump([name]));
    return (await this.withAdded([document]))[0];
  }

  async delete(name: string): Promise<boolean> {
    const result = await this.run(() => this.collection.deleteOne({ name }));
    if (result.deletedCount === 0) return false;
    // Employees added after creation live apart; a group made again under this name must not inherit them.
    await this.run(() => this.employees.deleteMany({ group: name }));
    await this.run(() => this.revisions.bump([name]));
    return true;
  }

  /**
   * The whole employee list goes into the group's document (the additions kept apart are dropped), and a
   * group of that name under another id (a forced copy) gives way.
   */
  async restore(group: Group): Promise<void> {
    const _id = copiedObjectId(group.id);
    await this.run(() => this.collection.deleteMany({ name: group.name, _id: { $ne: _id } }));
    await this.run(() => this.employees.deleteMany({ group: group.name }));
    await this.run(() =>
      this.collection.replaceOne(
        { _id },
        {
          name: group.name,
          package: group.package,
          employee: [...group.employee],
          settings: toStoredJson(group.settings),
          ...(group.retentionDays === undefined ? {} : { retentionDays: group.retentionDays }),
        },
        { upsert: true },
      ),
    );
    await this.run(() => this.revisions.bump([group.name]));
  }

  async revision(name: string): Promise<string> {
    return this.run(() => this.revisions.current(name));
  }

  async findByName(name: string): Promise<Group | undefined> {
    const document = await this.run(() => this.collection.findOne({ name }));
    return document === null ? undefined : (await this.withAdded([document]))[0];
  }

  async list(): Promise<Group[]> {
    const documents = await this.run(() => this.collection.find({}).sort({ name: 1 }).toArray());
    return this.withAdded(documents);
  }

  /** The groups with the employees added since each was created appended, oldest addition first. */
  private async withAdded(documents: readonly GroupDocument[]): Promise<Group[]> {
    if (documents.length === 0) return [];
    const added = await this.run(() =>
      this.employees
        .find({ group: { $in: documents.map((document) => document.name) } })
        .sort({ group: 1, _id: 1 })
        .toArray(),
    );
    const byGroup = new Map<string, string[]>();
    for (const { group, employee } of added) byGroup.set(group, [...(byGroup.get(group) ?? []), employee]);
    return documents.map((document) => {
      const group = groupMapper.toEntity(document);
      return { ...group, employee: [...group.employee, ...(byGroup.get(document.name) ?? [])] };
    });
  }

  /**
   * One inserted document per addition: an insert never loses to another, where a $push on one group document
   * can (FerretDB v1 applies it as an unisolated read-modify-write). The list is assembled on read.
   */
  async addEmployee(name: string, employee: string): Promise<Group | undefined> {
    if ((await this.run(() => this.collection.findOne({ name }, { projection: { _id: 1 } }))) === null) {
      return undefined;
    }
    await this.run(() =>
      this.employees.insertOne({ _id: new ObjectId(), group: name, employee: String(employee) }),
    );
    await this.run(() => this.revisions.bump([name]));
    return this.findByName(name);
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
    return (await this.withAdded([document]))[0];
  }
}
