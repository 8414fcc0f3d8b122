import { inject, injectable } from 'inversify';
import { type Filter, ObjectId } from 'mongodb';
import {
  ConflictError,
  type AlertEvent,
  type AlertOutboxRepository,
  type Channel,
  type GroupNotifySettings,
  type Webhook,
  type NewOutboxMessage,
  type OutboxMessage,
  type OutboxPending,
  type OutboxStatus,
} from '@hortus/core';
import { type CollectionSpec, MONGO_DATABASE, MongoRepository, toDate } from './support.js';
import { type MongoDatabase } from './database.js';

interface OutboxDocument {
  _id: ObjectId;
  group: string;
  event: AlertEvent;
  channel: Channel;
  subject: string;
  text: string;
  payload: OutboxMessage['payload'];
  createdAt: Date;
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError?: string;
  deliveredAt?: Date;
}

interface NotifySettingsDocument {
  _id: string;
  webhooks: Webhook[];
  events: AlertEvent[];
}

export const outboxCollection: CollectionSpec = {
  name: 'outbox',
  // claimDue: pending messages by due time; list: a group's messages, newest first.
  indexes: [
    { key: { status: 1, nextAttemptAt: 1, _id: 1 }, name: 'status_due' },
    { key: { group: 1, _id: -1 }, name: 'group_id' },
  ],
};

export const notifySettingsCollection: CollectionSpec = { name: 'notifysettings', indexes: [] };

/**
 * One document per (message, attempt): its unique _id lets exactly one worker lease an attempt, also on
 * servers whose conditional updates are not isolated (FerretDB v1).
 */
export const outboxClaimCollection: CollectionSpec = {
  name: 'outboxclaims',
  indexes: [{ key: { message: 1 }, name: 'message' }],
};

interface OutboxClaimDocument {
  _id: string;
  message: ObjectId;
  at: Date;
}

function toMessage(document: OutboxDocument): OutboxMessage {
  return {
    id: document._id.toHexString(),
    group: document.group,
    event: document.event,
    channel: { ...document.channel },
    subject: document.subject,
    text: document.text,
    payload: { ...document.payload },
    createdAt: toDate(document.createdAt),
    status: document.status,
    attempts: document.attempts,
    nextAttemptAt: toDate(document.nextAttemptAt),
    ...(typeof document.lastError === 'string' ? { lastError: document.lastError } : {}),
    ...(document.deliveredAt instanceof Date ? { deliveredAt: toDate(document.deliveredAt) } : {}),
  };
}

function toDocument(message: OutboxMessage): OutboxDocument {
  return {
    _id: new ObjectId(message.id),
    group: message.group,
    event: message.event,
    channel: { ...message.channel },
    subject: message.subject,
    text: message.text,
    payload: { ...message.payload },
    createdAt: new Date(message.createdAt.getTime()),
    status: message.status,
    attempts: message.attempts,
    nextAttemptAt: new Date(message.nextAttemptAt.getTime()),
    ...(message.lastError === undefined ? {} : { lastError: message.lastError }),
    ...(message.deliveredAt === undefined ? {} : { deliveredAt: new Date(message.deliveredAt.getTime()) }),
  };
}

@injectable()
export class MongoAlertOutboxRepository
  extends MongoRepository<OutboxDocument>
  implements AlertOutboxRepository
{
  private readonly settings;
  private readonly claims;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, outboxCollection, 'group', 'That message is already queued');
    this.settings = db.collection<NotifySettingsDocument>(notifySettingsCollection.name);
    this.claims = db.collection<OutboxClaimDocument>(outboxClaimCollection.name);
  }

  async getSettings(group: string): Promise<GroupNotifySettings | undefined> {
    const document = await this.run(() => this.settings.findOne({ _id: group }));
    if (document === null) return undefined;
    return {
      group,
      webhooks: document.webhooks.map(({ url, secret, format }) => ({
        url,
        secret,
        ...(format === undefined ? {} : { format }),
      })),
      events: [...document.events],
    };
  }

  async saveSettings(settings: GroupNotifySettings): Promise<void> {
    await this.run(() =>
      this.settings.replaceOne(
        { _id: settings.group },
        {
          webhooks: settings.webhooks.map(({ url, secret, format }) => ({
            url,
            secret,
            ...(format === undefined ? {} : { format }),
          })),
          events: [...settings.events],
        },
        { upsert: true },
      ),
    );
  }

  async enqueue(messages: readonly NewOutboxMessage[]): Promise<OutboxMessage[]> {
    const documents = messages.map((message) =>
      toDocument({
        ...message,
        id: new ObjectId().toHexString(),
        status: 'pending',
        attempts: 0,
        nextAttemptAt: message.createdAt,
      }),
    );
    if (documents.length > 0) await this.run(() => this.collection.insertMany(documents), 2);
    return documents.map(toMessage);
  }

  async claimDue(now: Date, leaseMs: number, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    const due = await this.run(() =>
      this.collection
        .find({ status: 'pending', nextAttemptAt: { $lte: now } })
        .sort({ nextAttemptAt: 1, _id: 1 })
        .limit(Math.floor(limit))
        .toArray(),
    );
    const until = new Date(now.getTime() + leaseMs);
    const claimed: OutboxMessage[] = [];
    for (const document of due) {
      const attempt = document.attempts + 1;
      try {
        await this.run(() =>
          this.claims.insertOne({
            _id: `${document._id.toHexString()}:${attempt}`,
            message: document._id,
            at: now,
          }),
        );
      } catch (error) {
        // Another worker leased this attempt first.
        if (error instanceof ConflictError) continue;
        throw error;
      }
      await this.run(() =>
        this.collection.updateOne(
          { _id: document._id },
          { $set: { nextAttemptAt: until, attempts: attempt } },
        ),
      );
      claimed.push(toMessage({ ...document, attempts: attempt, nextAttemptAt: until }));
    }
    return claimed;
  }

  async markDelivered(id: string, at: Date): Promise<void> {
    await this.run(() => this.claims.deleteMany({ message: new ObjectId(id) }));
    await this.run(() =>
      this.collection.updateOne(
        { _id: new ObjectId(id), status: 'pending' },
        { $set: { status: 'delivered', deliveredAt: new Date(at.getTime()) }, $unset: { lastError: '' } },
      ),
    );
    await this.dropSecret([new ObjectId(id)]);
  }

  async markFailed(id: string, error: string, retryAt: Date | undefined): Promise<void> {
    if (retryAt === undefined) await this.run(() => this.claims.deleteMany({ message: new ObjectId(id) }));
    await this.run(() =>
      this.collection.updateOne(
        { _id: new ObjectId(id), status: 'pending' },
        {
          $set:
            retryAt === undefined
              ? { status: 'failed', lastError: error }
              : { status: 'pending', lastError: error, nextAttemptAt: new Date(retryAt.getTime()) },
        },
      ),
    );
    if (retryAt === undefined) await this.dropSecret([new ObjectId(id)]);
  }

  /** A webhook message that will not be sent (again) keeps no secret; a pending one is left alone. */
  private async dropSecret(ids: readonly ObjectId[]): Promise<void> {
    await this.run(() =>
      this.collection.updateMany(
        { _id: { $in: [...ids] }, status: { $ne: 'pending' }, 'channel.type': 'webhook' },
        { $set: { 'channel.secret': '' } },
      ),
    );
  }

  async cancelWebhook(group: string, url: string, reason: string): Promise<number> {
    return this.cancel({ group, 'channel.type': 'webhook', 'channel.url': url }, reason);
  }

  async forgetGroup(group: string, reason: string): Promise<number> {
    await this.run(() => this.settings.deleteOne({ _id: group }));
    return this.cancel({ group }, reason);
  }

  /** Cancels the pending messages the filter names, blanking the secret of webhook ones. */
  private async cancel(filter: Record<string, string>, reason: string): Promise<number> {
    const pending: Filter<OutboxDocument> = { ...filter, status: 'pending' };
    const found = await this.run(() => this.collection.find(pending, { projection: { _id: 1 } }).toArray());
    if (found.length === 0) return 0;
    const ids = found.map((document) => document._id);
    const { modifiedCount } = await this.run(() =>
      this.collection.updateMany(
        { _id: { $in: ids }, status: 'pending' },
        { $set: { status: 'cancelled', lastError: reason } },
      ),
    );
    await this.dropSecret(ids);
    await this.run(() => this.claims.deleteMany({ message: { $in: ids } }));
    return modifiedCount;
  }

  async listCopies(after: string | undefined, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    // _id order is the order queued: list answers by it too.
    const documents = await this.run(() =>
      this.collection
        .find(after === undefined ? {} : { _id: { $gt: new ObjectId(after) } })
        .sort({ _id: 1 })
        .limit(Math.floor(limit))
        .toArray(),
    );
    return documents.map(toMessage);
  }

  async restore(messages: readonly OutboxMessage[]): Promise<void> {
    if (messages.length === 0) return;
    // Replacing by _id is slow on FerretDB (an upsert each): new messages are inserted in one round trip,
    // and only held ones that differ (a copy run again after the source moved on) are replaced.
    const held = await this.run(() =>
      this.collection.find({ _id: { $in: messages.map(({ id }) => new ObjectId(id)) } }).toArray(),
    );
    const heldAs = new Map(
      held.map((document) => [document._id.toHexString(), JSON.stringify(toMessage(document))]),
    );
    const fresh = messages.filter(({ id }) => !heldAs.has(id)).map(toDocument);
    const changed = messages
      .filter((message) => heldAs.has(message.id) && heldAs.get(message.id) !== JSON.stringify(message))
      .map(toDocument);
    if (fresh.length > 0) await this.run(() => this.collection.insertMany(fresh, { ordered: true }), 2);
    if (changed.length === 0) return;
    await this.run(
      () =>
        this.collection.bulkWrite(
          changed.map(({ _id, ...document }) => ({ replaceOne: { filter: { _id }, replacement: document } })),
          { ordered: false },
        ),
      2,
    );
    // A lease this store gave an earlier attempt must not keep the restored attempt from being claimed.
    const pending = changed.filter((document) => document.status === 'pending').map(({ _id }) => _id);
    if (pending.length > 0) await this.run(() => this.claims.deleteMany({ message: { $in: pending } }));
  }

  async countPending(now: Date): Promise<OutboxPending> {
    // Two counts on the status_due index, however many messages were delivered.
    const [due, deferred] = await this.run(() =>
      Promise.all([
        this.collection.countDocuments({ status: 'pending', nextAttemptAt: { $lte: now } }),
        this.collection.countDocuments({ status: 'pending', nextAttemptAt: { $gt: now } }),
      ]),
    );
    return { due, deferred };
  }

  async list(group: string, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    const documents = await this.run(() =>
      this.collection.find({ group }).sort({ _id: -1 }).limit(Math.floor(limit)).toArray(),
    );
    return documents.map(toMessage);
  }
}
