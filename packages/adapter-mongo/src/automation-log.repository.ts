import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type AutomationEvent,
  type AutomationLogRepository,
  type AutomationTrigger,
  type NewAutomationEvent,
} from '@hortus/core';
import { type CollectionSpec, isLiteralObject, MONGO_DATABASE, MongoRepository, toDate } from './support.js';
import { type MongoDatabase } from './database.js';

interface AutomationEventDocument {
  _id: ObjectId;
  group: string;
  object: string;
  value: string;
  previousValue: string;
  at: Date;
  trigger: AutomationTrigger;
  rule: string;
  reading?: { topic: string; value: number; time: Date };
  slot?: Date;
  late?: true;
}

export const automationLogCollection: CollectionSpec = {
  name: 'automationevents',
  // listByGroup: a group's events, most recently recorded (greatest ObjectId) first.
  indexes: [{ key: { group: 1, _id: -1 }, name: 'group_id' }],
};

const automationEventMapper = {
  toDocument(event: NewAutomationEvent, id: ObjectId = new ObjectId()): AutomationEventDocument {
    return {
      _id: id,
      group: event.group,
      object: event.object,
      value: event.value,
      previousValue: event.previousValue,
      at: new Date(event.at.getTime()),
      trigger: event.trigger,
      rule: event.rule,
      ...(event.reading === undefined
        ? {}
        : {
            reading: {
              topic: event.reading.topic,
              value: event.reading.value,
              time: new Date(event.reading.time.getTime()),
            },
          }),
      ...(event.slot === undefined ? {} : { slot: new Date(event.slot.getTime()) }),
      ...(event.late === true ? { late: true as const } : {}),
    };
  },
  toEntity(document: AutomationEventDocument): AutomationEvent {
    const reading = document.reading;
    return {
      id: document._id.toHexString(),
      group: document.group,
      object: document.object,
      value: document.value,
      previousValue: document.previousValue,
      at: toDate(document.at),
      trigger: document.trigger,
      rule: document.rule,
      ...(isLiteralObject(reading)
        ? { reading: { topic: reading.topic, value: Number(reading.value), time: toDate(reading.time) } }
        : {}),
      ...(document.slot === undefined || document.slot === null ? {} : { slot: toDate(document.slot) }),
      ...(document.late === true ? { late: true as const } : {}),
    };
  },
};

@injectable()
export class MongoAutomationLogRepository
  extends MongoRepository<AutomationEventDocument>
  implements AutomationLogRepository
{
  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, automationLogCollection, 'action', 'That automation event is already stored');
  }

  async record(event: NewAutomationEvent): Promise<AutomationEvent> {
    const document = automationEventMapper.toDocument(event);
    await this.run(() => this.collection.insertOne(document));
    return automationEventMapper.toEntity(document);
  }

  async deleteByGroup(group: string): Promise<number> {
    return (await this.run(() => this.collection.deleteMany({ group }))).deletedCount;
  }

  async listCopies(after: string | undefined, limit: number): Promise<AutomationEvent[]> {
    if (!(limit > 0)) return [];
    // _id order is the order recorded: listByGroup answers by it too.
    const documents = await this.run(() =>
      this.collection
        .find(after === undefined ? {} : { _id: { $gt: new ObjectId(after) } })
        .sort({ _id: 1 })
        .limit(Math.floor(limit))
        .toArray(),
    );
    return documents.map(automationEventMapper.toEntity);
  }

  async restore(events: readonly AutomationEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const documents = events.map(({ id, ...fields }) =>
      automationEventMapper.toDocument(fields, new ObjectId(id)),
    );
    // Events never change: those held already are left out, the rest inserted in one round trip.
    const held = await this.run(() =>
      this.collection
        .find({ _id: { $in: documents.map(({ _id }) => _id) } }, { projection: { _id: 1 } })
        .toArray(),
    );
    const heldIds = new Set(held.map(({ _id }) => _id.toHexString()));
    const missing = documents.filter(({ _id }) => !heldIds.has(_id.toHexString()));
    if (missing.length > 0) await this.run(() => this.collection.insertMany(missing, { ordered: true }), 2);
    return missing.length;
  }

  async listByGroup(group: string, limit: number): Promise<AutomationEvent[]> {
    // A limit of 0 means "no limit" to MongoDB.
    if (limit <= 0) return [];
    const documents = await this.run(() =>
      this.collection.find({ group }).sort({ _id: -1 }).limit(limit).toArray(),
    );
    return documents.map(automationEventMapper.toEntity);
  }
}
