import { inject, injectable } from 'inversify';
import { type ServerSecretRepository } from '@hortus/core';
import { type CollectionSpec, isDuplicateKeyError, MONGO_DATABASE, MongoRepository } from './support.js';
import { type MongoDatabase } from './database.js';

interface ServerSecretDocument {
  _id: string;
  value: string;
}

export const serverSecretCollection: CollectionSpec = { name: 'serversecrets', indexes: [] };

@injectable()
export class MongoServerSecretRepository
  extends MongoRepository<ServerSecretDocument>
  implements ServerSecretRepository
{
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, serverSecretCollection, 'user', 'The secret exists already');
  }

  async findOrCreate(name: string, candidate: string): Promise<string> {
    const existing = await this.run(() => this.collection.findOne({ _id: name }));
    if (existing !== null) return existing.value;
    try {
      await this.collection.insertOne({ _id: name, value: candidate });
      return candidate;
    } catch (error) {
      // Another server stored one first: every server must use that one.
      if (!isDuplicateKeyError(error)) return this.run(() => Promise.reject(error));
    }
    const stored = await this.run(() => this.collection.findOne({ _id: name }));
    if (stored === null) throw new Error(`The server secret ${name} vanished while it was stored`);
    return stored.value;
  }

  async list(): Promise<{ name: string; value: string }[]> {
    const documents = await this.run(() => this.collection.find({}).sort({ _id: 1 }).toArray());
    return documents.map((document) => ({ name: document._id, value: String(document.value) }));
  }

  async restore(name: string, value: string): Promise<void> {
    await this.run(() => this.collection.replaceOne({ _id: name }, { value }, { upsert: true }));
  }
}
