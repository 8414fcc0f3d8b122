import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type ActionHistoryEntry,
  type ActionHistoryRepository,
  type NewActionHistoryEntry,
  storedActor,
} from '@hortus/core';
import { type CollectionSpec, copiedObjectId, MONGO_DATABASE, MongoRepository, toDate } from './support.js';
import { type MongoDatabase } from './database.js';

interface ActionHistoryDocument {
  _id: ObjectId;
  group: string;
  object: string;
  value: string;
  at: Date;
  actor: { kind: string; id?: string };
}

export const actionHistoryCollection: CollectionSpec = {
  name: 'actionhistory',
  // list: a group's entries, or one action's, newest first (at, then the later recorded); the second also
  // serves the per-action trim after each write.
  indexes: [
    { key: { group: 1, at: -1, _id: -1 }, name: 'group_at' },
    { key: { group: 1, object: 1, at: -1, _id: -1 }, name: 'group_object_at' },
  ],
};

const actionHistoryMapper = {
  toDocument(entry: ActionHistoryEntry): ActionHistoryDocument {
    return {
      _id: copiedObjectId(entry.id),
      group: entry.group,
      object: entry.object,
      value: entry.value,
      at: new Date(entry.at.getTime()),
      actor:
        entry.actor.id === undefined
          ? { kind: entry.actor.kind }
          : { kind: entry.actor.kind, id: entry.actor.id },
    };
  },
  toEntity(document: ActionHistoryDocument): ActionHistoryEntry {
    return {
      id: document._id.toHexString(),
      group: document.group,
      object: document.object,
      value: document.value,
      at: toDate(document.at),
      actor: storedActor(document.actor?.kind, document.actor?.id),
    };
  },
};

const NEWEST_FIRST = { at: -1, _id: -1 } as const;

@injectable()
export class MongoActionHistoryRepository
  extends MongoRepository<ActionHistoryDocument>
  implements ActionHistoryRepository
{
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, actionHistoryCollection, 'action', 'That history entry is already stored');
  }

  async record(entry: NewActionHistoryEntry, keep: number): Promise<ActionHistoryEntry> {
    const document = actionHistoryMapper.toDocument({ ...entry, id: new ObjectId().toHexString() });
    await this.run(async () => {
      await this.collection.insertOne(document);
      // Usually one entry past `keep`: the trim reads only ids, through the (group, object, at) index.
      const surplus = await this.collection
        .find({ group: entry.group, object: entry.object }, { projection: { _id: 1 } })
        .sort(NEWEST_FIRST)
        .skip(Math.max(Math.floor(keep), 0))
        .toArray();
      if (surplus.length > 0) {
        await this.collection.deleteMany({ _id: { $in: surplus.map((held) => held._id) } });
      }
    }, 2);
    return actionHistoryMapper.toEntity(document);
  }

  async list(group: string, object: string | undefined, limit: number): Promise<ActionHistoryEntry[]> {
    // A limit of 0 means "no limit" to MongoDB.
    if (!(limit > 0)) return [];
    const filter = object === undefined ? { group } : { group, object };
    const documents = await this.run(() =>
      this.collection.find(filter).sort(NEWEST_FIRST).limit(Math.floor(limit)).toArray(),
    );
    return documents.map(actionHistoryMapper.toEntity);
  }

  async deleteByAction(group: string, object: string): Promise<number> {
    return (await this.run(() => this.collection.deleteMany({ group, object }))).deletedCount;
  }

  async deleteByGroup(group: string): Promise<number> {
    return (await this.run(() => this.collection.deleteMany({ group }))).deletedCount;
  }

  async groups(): Promise<string[]> {
    const groups = await this.run(() => this.collection.distinct('group'));
    return groups.map(String).sort();
  }

  async restore(entry: ActionHistoryEntry): Promise<void> {
    const document = actionHistoryMapper.toDocument(entry);
    const { _id, ...fields } = document;
    await this.run(() => this.collection.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true }));
  }
}
