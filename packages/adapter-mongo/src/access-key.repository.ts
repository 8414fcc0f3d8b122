import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type AccessKey,
  type AccessKeyCopy,
  type AccessKeyKind,
  type AccessKeyRepository,
  type NewAccessKey,
} from '@hortus/core';
import {
  type CollectionSpec,
  copiedObjectId,
  MONGO_DATABASE,
  MongoRepository,
  toDate,
  toObjectId,
} from './support.js';
import { type MongoDatabase } from './database.js';

interface AccessKeyDocument {
  _id: ObjectId;
  name: string;
  kind: AccessKeyKind;
  groups: string[];
  secretHash: string;
  createdAt: Date;
  revokedAt?: Date;
}

export const accessKeyCollection: CollectionSpec = {
  name: 'accesskeys',
  indexes: [
    // Every request with a key is one lookup by hash; two keys with one hash would make it ambiguous.
    { key: { secretHash: 1 }, name: 'secretHash_unique', unique: true },
    { key: { createdAt: 1, _id: 1 }, name: 'createdAt_id' },
  ],
};

/** The hash stays in the store: nothing above the repository ever needs it again. */
const publicFields = { name: 1, kind: 1, groups: 1, createdAt: 1, revokedAt: 1 } as const;

const accessKeyMapper = {
  toDocument(key: NewAccessKey): AccessKeyDocument {
    return {
      _id: new ObjectId(),
      name: key.name,
      kind: key.kind,
      groups: [...key.groups],
      secretHash: key.secretHash,
      createdAt: key.createdAt,
    };
  },
  toEntity(document: Omit<AccessKeyDocument, 'secretHash'>): AccessKey {
    return {
      id: document._id.toHexString(),
      name: String(document.name),
      kind: document.kind,
      groups: Array.isArray(document.groups) ? document.groups.map(String) : [],
      createdAt: toDate(document.createdAt),
      ...(document.revokedAt === undefined || document.revokedAt === null
        ? {}
        : { revokedAt: toDate(document.revokedAt) }),
    };
  },
};

@injectable()
export class MongoAccessKeyRepository
  extends MongoRepository<AccessKeyDocument>
  implements AccessKeyRepository
{
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, accessKeyCollection, 'access-key', 'An access key with that secret exists');
  }

  async create(key: NewAccessKey): Promise<AccessKey> {
    const document = accessKeyMapper.toDocument(key);
    await this.run(() => this.collection.insertOne(document));
    return accessKeyMapper.toEntity(document);
  }

  async findByHash(secretHash: string): Promise<AccessKey | undefined> {
    if (typeof secretHash !== 'string') return undefined;
    const document = await this.run(() =>
      this.collection.findOne({ secretHash }, { projection: publicFields }),
    );
    return document === null ? undefined : accessKeyMapper.toEntity(document);
  }

  async list(): Promise<AccessKey[]> {
    const documents = await this.run(() =>
      this.collection.find({}, { projection: publicFields }).sort({ createdAt: 1, _id: 1 }).toArray(),
    );
    return documents.map(accessKeyMapper.toEntity);
  }

  async revoke(id: string, at: Date): Promise<AccessKey | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    // Only a key not revoked yet is changed, so a second revoke keeps the first time.
    await this.run(() =>
      this.collection.updateOne({ _id, revokedAt: { $exists: false } }, { $set: { revokedAt: at } }),
    );
    const document = await this.run(() => this.collection.findOne({ _id }, { projection: publicFields }));
    return document === null ? undefined : accessKeyMapper.toEntity(document);
  }

  async listCopies(): Promise<AccessKeyCopy[]> {
    const documents = await this.run(() => this.collection.find({}).sort({ createdAt: 1, _id: 1 }).toArray());
    return documents.map((document) => ({
      ...accessKeyMapper.toEntity(document),
      secretHash: String(document.secretHash),
    }));
  }

  /** A key with that digest under another id (a forced copy) gives way to this one. */
  async restore(key: AccessKeyCopy): Promise<void> {
    const _id = copiedObjectId(key.id);
    await this.run(() => this.collection.deleteMany({ secretHash: key.secretHash, _id: { $ne: _id } }));
    await this.run(() =>
      this.collection.replaceOne(
        { _id },
        {
          name: key.name,
          kind: key.kind,
          groups: [...key.groups],
          secretHash: key.secretHash,
          createdAt: key.createdAt,
          ...(key.revokedAt === undefined ? {} : { revokedAt: key.revokedAt }),
        },
        { upsert: true },
      ),
    );
  }

  async hasAny(): Promise<boolean> {
    const document = await this.run(() => this.collection.findOne({}, { projection: { _id: 1 } }));
    return document !== null;
  }
}
