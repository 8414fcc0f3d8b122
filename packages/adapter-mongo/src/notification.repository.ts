import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type ImportedNotification,
  type NewNotification,
  type Notification,
  notificationKey,
  notificationCopy,
  type NotificationRepository,
  readIgnoreState,
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

const notificationMapper = {
  toDocument(notification: NewNotification, ignore: StoredIgnoreState = 'false'): NotificationDocument {
    // Absent optional fields stay absent: the driver would store `undefined` as null.
    return {
      _id: new ObjectId(),
      group: notification.group,
      time: new Date(notification.time.getTime()),
      message: notification.message,
      ignore,
      ...(notification.topic === undefined ? {} : { topic: notification.topic }),
      ...(notification.value === undefined ? {} : { value: notification.value }),
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
