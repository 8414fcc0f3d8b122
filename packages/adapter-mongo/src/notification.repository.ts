import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type Acknowledgement,
  type Actor,
  type ImportedNotification,
  type NewNotification,
  type Notification,
  notificationKey,
  notificationCopy,
  type NotificationRepository,
  readIgnoreState,
  readSeverity,
  storedActor,
  type StoredIgnoreState,
} from '@hortus/core';
import { StoredRevisions } from './revisions.js';
import { type CollectionSpec, MONGO_DATABASE, MongoRepository, toDate } from './support.js';
import { type MongoDatabase } from './database.js';

interface NotificationDocument {
  _id: ObjectId;
  group: string;
  time: Date;
  message: string;
  ignore: StoredIgnoreState;
  topic?: string;
  value?: number;
  severity?: string;
  acknowledged?: { at: Date; by: Actor };
}

export const notificationCollection: CollectionSpec = {
  name: 'notifications',
  indexes: [
    // listOpen: the open ones of a group, newest record (greatest ObjectId) first.
    { key: { group: 1, ignore: 1, _id: -1 }, name: 'group_ignore_id' },
    // ignoreAt: the ones of a group at given times.
    { key: { group: 1, time: 1 }, name: 'group_time' },
  ],
};

function acknowledgementDocument(acknowledgement: Acknowledgement): { at: Date; by: Actor } {
  const { kind, id, name } = acknowledgement.by;
  return { at: new Date(acknowledgement.at.getTime()), by: storedActor(kind, id, name) };
}

function acknowledgedOf(document: NotificationDocument): Pick<Notification, 'severity' | 'acknowledged'> {
  const severity = readSeverity(document.severity);
  const acknowledged = document.acknowledged;
  return {
    ...(severity === undefined ? {} : { severity }),
    ...(acknowledged === undefined || acknowledged === null
      ? {}
      : {
          acknowledged: {
            at: toDate(acknowledged.at),
            by: storedActor(acknowledged.by?.kind, acknowledged.by?.id, acknowledged.by?.name),
          },
        }),
  };
}

/** An id the store cannot have issued is simply not found. */
function objectIdOf(id: string): ObjectId | undefined {
  return /^[0-9a-f]{24}$/iu.test(id) ? new ObjectId(id) : undefined;
}

const notificationMapper = {
  toDocument(
    notification: NewNotification & { readonly acknowledged?: Acknowledgement },
    ignore: StoredIgnoreState = 'false',
  ): NotificationDocument {
    // Absent optional fields stay absent: the driver would store `undefined` as null.
    return {
      _id: new ObjectId(),
      group: notification.group,
      time: new Date(notification.time.getTime()),
      message: notification.message,
      ignore,
      ...(notification.topic === undefined ? {} : { topic: notification.topic }),
      ...(notification.value === undefined ? {} : { value: notification.value }),
      ...(notification.severity === undefined ? {} : { severity: notification.severity }),
      ...(notification.acknowledged === undefined
        ? {}
        : { acknowledged: acknowledgementDocument(notification.acknowledged) }),
    };
  },
  toEntity(document: NotificationDocument): Notification {
    return {
      id: document._id.toHexString(),
      group: document.group,
      time: toDate(document.time),
      message: String(document.message),
      ignore: readIgnoreState(document.ignore),
      ...(typeof document.topic === 'string' ? { topic: document.topic } : {}),
      ...(document.value === undefined || document.value === null ? {} : { value: Number(document.value) }),
      ...acknowledgedOf(document),
    };
  },
};

@injectable()
export class MongoNotificationRepository
  extends MongoRepository<NotificationDocument>
  implements NotificationRepository
{
  private readonly revisions: StoredRevisions;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, notificationCollection, 'notification', 'That notification is already stored');
    this.revisions = new StoredRevisions(db, 'notifications');
  }

  async revision(group: string): Promise<string> {
    return this.run(() => this.revisions.current(group));
  }

  /** Every write bumps the group's revision after it, so a poll that sees the new revision sees the change. */
  async create(notification: NewNotification): Promise<Notification> {
    const document = notificationMapper.toDocument(notification);
    await this.run(async () => {
      await this.collection.insertOne(document);
      await this.revisions.bump([document.group]);
    });
    return notificationMapper.toEntity(document);
  }

  /**
   * One query per group of the batch (on the group_time index) finds what is stored already; no unique
   * index guards notifications, since Hortus's own may repeat a (group, time, message).
   */
  async addMissing(notifications: readonly ImportedNotification[]): Promise<number> {
    const timesByGroup = new Map<string, Date[]>();
    for (const { group, time } of notifications) {
      const times = timesByGroup.get(group) ?? [];
      times.push(time);
      timesByGroup.set(group, times);
    }
    return this.run(async () => {
      const seen = new Set<string>();
      for (const [group, times] of timesByGroup) {
        const stored = await this.collection
          .find({ group, time: { $in: times } }, { projection: { group: 1, time: 1, message: 1 } })
          .toArray();
        for (const document of stored)
          seen.add(
            notificationKey({ ...document, time: toDate(document.time), message: String(document.message) }),
          );
      }
      const missing: NotificationDocument[] = [];
      for (const notification of notifications) {
        const key = notificationKey(notification);
        if (seen.has(key)) continue;
        seen.add(key);
        missing.push(notificationMapper.toDocument(notification, notification.ignore));
      }
      if (missing.length > 0) {
        await this.collection.insertMany(missing, { ordered: true });
        await this.revisions.bump(missing.map((document) => document.group));
      }
      return missing.length;
    });
  }

  async listOpen(group: string): Promise<Notification[]> {
    // ObjectIds grow with creation, so _id descending is "most recently created first".
    const documents = await this.run(() =>
      this.collection.find({ group, ignore: 'false' }).sort({ _id: -1 }).toArray(),
    );
    return documents.map(notificationMapper.toEntity);
  }

  async listCopies(group: string): Promise<ImportedNotification[]> {
    const documents = await this.run(() => this.collection.find({ group }).sort({ _id: 1 }).toArray());
    return documents.map((document) =>
      notificationCopy(notificationMapper.toEntity(document), document.ignore),
    );
  }

  async deleteByGroup(group: string): Promise<number> {
    return this.run(async () => {
      const { deletedCount } = await this.collection.deleteMany({ group });
      if (deletedCount > 0) await this.revisions.bump([group]);
      return deletedCount;
    });
  }

  async find(group: string, id: string): Promise<Notification | undefined> {
    const _id = objectIdOf(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() => this.collection.findOne({ _id, group }));
    return document === null ? undefined : notificationMapper.toEntity(document);
  }

  /** Sets it only where none is (one update), so the first acknowledgement stays whoever writes second. */
  async acknowledge(
    group: string,
    id: string,
    acknowledgement: Acknowledgement,
  ): Promise<Notification | undefined> {
    const _id = objectIdOf(id);
    if (_id === undefined) return undefined;
    return this.run(async () => {
      const { modifiedCount } = await this.collection.updateOne(
        { _id, group, acknowledged: { $exists: false } },
        { $set: { acknowledged: acknowledgementDocument(acknowledgement) } },
      );
      if (modifiedCount > 0) await this.revisions.bump([group]);
      const document = await this.collection.findOne({ _id, group });
      return document === null ? undefined : notificationMapper.toEntity(document);
    });
  }

  async countOpen(group: string): Promise<number> {
    // Served by the group_ignore_id index.
    return this.run(() => this.collection.countDocuments({ group, ignore: 'false' }));
  }

  async ignoreAt(group: string, times: readonly Date[]): Promise<number> {
    if (times.length === 0) return 0;
    return this.run(async () => {
      const { matchedCount } = await this.collection.updateMany(
        { group, time: { $in: [...times] } },
        { $set: { ignore: 'true' } },
      );
      if (matchedCount > 0) await this.revisions.bump([group]);
      return matchedCount;
    });
  }
}
