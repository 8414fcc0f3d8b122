import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type Actor,
  type AuditEntry,
  type AuditLog,
  type AuditQuery,
  type NewAuditEntry,
  storedActor,
} from '@hortus/core';
import { type CollectionSpec, MONGO_DATABASE, MongoRepository, toDate } from './support.js';
import { type MongoDatabase } from './database.js';

/**
 * before and after are kept as JSON text: configuration holds keys a document may not (`$`, dots in
 * topic names are fine, but a client's settings are any JSON), and the trail only shows them.
 */
interface AuditDocument {
  _id: ObjectId;
  at: Date;
  actor: Actor;
  action: string;
  target: string;
  group?: string;
  before?: string;
  after?: string;
}

export const auditCollection: CollectionSpec = {
  name: 'auditlog',
  indexes: [
    { key: { at: -1, _id: -1 }, name: 'at_id' },
    { key: { group: 1, at: -1, _id: -1 }, name: 'group_at_id' },
  ],
};

const auditMapper = {
  toDocument(entry: NewAuditEntry): AuditDocument {
    const { kind, id, name } = entry.actor;
    return {
      _id: new ObjectId(),
      at: new Date(entry.at.getTime()),
      actor: storedActor(kind, id, name),
      action: entry.action,
      target: entry.target,
      ...(entry.group === undefined ? {} : { group: entry.group }),
      ...(entry.before === undefined ? {} : { before: JSON.stringify(entry.before) }),
      ...(entry.after === undefined ? {} : { after: JSON.stringify(entry.after) }),
    };
  },
  toEntity(document: AuditDocument): AuditEntry {
    return {
      id: document._id.toHexString(),
      at: toDate(document.at),
      actor: storedActor(document.actor?.kind, document.actor?.id, document.actor?.name),
      action: String(document.action),
      target: String(document.target),
      ...(typeof document.group === 'string' ? { group: document.group } : {}),
      ...(typeof document.before === 'string' ? { before: JSON.parse(document.before) as unknown } : {}),
      ...(typeof document.after === 'string' ? { after: JSON.parse(document.after) as unknown } : {}),
    };
  },
};

@injectable()
export class MongoAuditLog extends MongoRepository<AuditDocument> implements AuditLog {
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, auditCollection, 'audit', 'That audit entry is already stored');
  }

  async record(entry: NewAuditEntry): Promise<AuditEntry> {
    const document = auditMapper.toDocument(entry);
    await this.run(() => this.collection.insertOne(document));
    return auditMapper.toEntity(document);
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const filter = {
      ...(query.group === undefined ? {} : { group: query.group }),
      ...(query.since === undefined ? {} : { at: { $gte: query.since } }),
    };
    const documents = await this.run(() =>
      this.collection.find(filter).sort({ at: -1, _id: -1 }).limit(query.limit).toArray(),
    );
    return documents.map((document) => auditMapper.toEntity(document));
  }
}
