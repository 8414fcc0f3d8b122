import { inject, injectable } from 'inversify';
import { type Db, ObjectId } from 'mongodb';
import {
  type IgnoreState,
  type NewNotification,
  type Notification,
  type NotificationRepository,
} from '@hortus/core';
import { type CollectionSpec, MONGO_DB, MongoRepository, toDate } from './support.js';

interface NotificationDocument {
  _id: ObjectId;
  group: string;
  time: Date;
  message: string;
  ignore: IgnoreState;
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
  toDocument(notification: NewNotification): NotificationDocument {
    // Absent optional fields stay absent: the driver would store `undefined` as null.
    return {
      _id: new ObjectId(),
      group: notification.group,
      time: new Date(notification.time.getTime()),
      message: notification.message,
      ignore: 'false',
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
      ignore: document.ignore === 'true' ? 'true' : 'false',
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
  constructor(@inject(MONGO_DB) db: Db) {
    super(db, notificationCollection, 'notification', 'That notification is already stored');
  }

  async create(notification: NewNotification): Promise<Notification> {
    const document = notificationMapper.toDocument(notification);
    await this.run(() => this.collection.insertOne(document));
    return notificationMapper.toEntity(document);
  }

  async listOpen(group: string): Promise<Notification[]> {
    // ObjectIds grow with creation, so _id descending is "most recently created first".
    const documents = await this.run(() =>
      this.collection.find({ group, ignore: 'false' }).sort({ _id: -1 }).toArray(),
    );
    return documents.map(notificationMapper.toEntity);
  }

  async ignoreAt(group: string, times: readonly Date[]): Promise<number> {
    if (times.length === 0) return 0;
    const result = await this.run(() =>
      this.collection.updateMany({ group, time: { $in: [...times] } }, { $set: { ignore: 'true' } }),
    );
    return result.matchedCount;
  }
}
