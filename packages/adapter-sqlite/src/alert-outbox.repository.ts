import { inject, injectable } from 'inversify';
import {
  type AlertEvent,
  type AlertOutboxRepository,
  type Channel,
  type GroupNotifySettings,
  type NewOutboxMessage,
  type OutboxMessage,
  type OutboxPending,
  type OutboxStatus,
} from '@hortus/core';
import { fromJson, newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface OutboxRow {
  id: string;
  grp: string;
  event: string;
  channel: string;
  subject: string;
  text: string;
  payload: string;
  created_at: number;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  delivered_at: number | null;
}

function toMessage(row: OutboxRow): OutboxMessage {
  return {
    id: row.id,
    group: row.grp,
    event: row.event as AlertEvent,
    channel: fromJson(row.channel) as Channel,
    subject: row.subject,
    text: row.text,
    payload: fromJson(row.payload) as OutboxMessage['payload'],
    createdAt: new Date(row.created_at),
    status: row.status as OutboxStatus,
    attempts: row.attempts,
    nextAttemptAt: new Date(row.next_attempt_at),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.delivered_at === null ? {} : { deliveredAt: new Date(row.delivered_at) }),
  };
}

function toRow(message: OutboxMessage): OutboxRow {
  return {
    id: message.id,
    grp: message.group,
    event: message.event,
    channel: JSON.stringify(message.channel),
    subject: message.subject,
    text: message.text,
    payload: JSON.stringify(message.payload),
    created_at: message.createdAt.getTime(),
    status: message.status,
    attempts: message.attempts,
    next_attempt_at: message.nextAttemptAt.getTime(),
    last_error: message.lastError ?? null,
    delivered_at: message.deliveredAt?.getTime() ?? null,
  };
}

/** SQL for a channel that keeps no webhook secret: a message that will not be sent (again). */
const channelWithoutSecret = `CASE WHEN json_extract(channel, '$.type') = 'webhook'
  THEN json_set(channel, '$.secret', '') ELSE channel END`;

const columns =
  'id, grp, event, channel, subject, text, payload, created_at, status, attempts, next_attempt_at, last_error, delivered_at';
const insert = `INSERT INTO outbox (${columns}) VALUES (@id, @grp, @event, @channel, @subject, @text, @payload,
  @created_at, @status, @attempts, @next_attempt_at, @last_error, @delivered_at)`;

@injectable()
export class SqliteAlertOutboxRepository extends SqliteRepository implements AlertOutboxRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'group', 'That message is already queued');
  }

  async getSettings(group: string): Promise<GroupNotifySettings | undefined> {
    const row = this.run(
      () =>
        this.connection.prepare('SELECT value FROM notify_settings WHERE grp = ?').get(group) as
          { value: string } | undefined,
    );
    return row === undefined ? undefined : (fromJson(row.value) as GroupNotifySettings);
  }

  async saveSettings(settings: GroupNotifySettings): Promise<void> {
    this.run(() =>
      this.connection
        .prepare(
          'INSERT INTO notify_settings (grp, value) VALUES (?, ?) ON CONFLICT (grp) DO UPDATE SET value = excluded.value',
        )
        .run(settings.group, JSON.stringify(settings)),
    );
  }

  async enqueue(messages: readonly NewOutboxMessage[]): Promise<OutboxMessage[]> {
    const rows = messages.map((message) =>
      toRow({ ...message, id: newId(), status: 'pending', attempts: 0, nextAttemptAt: message.createdAt }),
    );
    this.run(() =>
      this.connection.write(() => {
        const statement = this.connection.prepare(insert);
        for (const row of rows) statement.run(row);
      }),
    );
    return rows.map(toMessage);
  }

  async claimDue(now: Date, leaseMs: number, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    // Read and lease under one write lock: two processes on the file never take the same message.
    return this.run(() =>
      this.connection.write(() => {
        const rows = this.connection
          .prepare(
            `SELECT ${columns} FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?
             ORDER BY seq LIMIT ?`,
          )
          .all(now.getTime(), Math.floor(limit)) as OutboxRow[];
        const lease = this.connection.prepare(
          'UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ?',
        );
        const until = now.getTime() + leaseMs;
        return rows.map((row) => {
          lease.run(until, row.id);
          return toMessage({ ...row, attempts: row.attempts + 1, next_attempt_at: until });
        });
      }),
    );
  }

  async markDelivered(id: string, at: Date): Promise<void> {
    this.run(() =>
      this.connection
        .prepare(
          `UPDATE outbox SET status = 'delivered', delivered_at = ?, last_error = NULL, channel = ${channelWithoutSecret}
           WHERE id = ? AND status = 'pending'`,
        )
        .run(at.getTime(), id),
    );
  }

  async markFailed(id: string, error: string, retryAt: Date | undefined): Promise<void> {
    this.run(() =>
      retryAt === undefined
        ? this.connection
            .prepare(
              `UPDATE outbox SET status = 'failed', last_error = ?, channel = ${channelWithoutSecret}
               WHERE id = ? AND status = 'pending'`,
            )
            .run(error, id)
        : this.connection
            .prepare(
              "UPDATE outbox SET last_error = ?, next_attempt_at = ? WHERE id = ? AND status = 'pending'",
            )
            .run(error, retryAt.getTime(), id),
    );
  }

  async cancelWebhook(group: string, url: string, reason: string): Promise<number> {
    const { changes } = this.run(() =>
      this.connection
        .prepare(
          `UPDATE outbox SET status = 'cancelled', last_error = ?, channel = ${channelWithoutSecret}
           WHERE grp = ? AND status = 'pending' AND json_extract(channel, '$.type') = 'webhook'
             AND json_extract(channel, '$.url') = ?`,
        )
        .run(reason, group, url),
    );
    return changes;
  }

  async forgetGroup(group: string, reason: string): Promise<number> {
    return this.run(() =>
      this.connection.write(() => {
        this.connection.prepare('DELETE FROM notify_settings WHERE grp = ?').run(group);
        return this.connection
          .prepare(
            `UPDATE outbox SET status = 'cancelled', last_error = ?,
               channel = ${channelWithoutSecret}
             WHERE grp = ? AND status = 'pending'`,
          )
          .run(reason, group).changes;
      }),
    );
  }

  async listCopies(after: string | undefined, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    // In seq order, the order queued; an `after` that is gone starts over.
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${columns} FROM outbox
             WHERE seq > coalesce((SELECT seq FROM outbox WHERE id = ?), 0) ORDER BY seq LIMIT ?`,
          )
          .all(after ?? null, Math.floor(limit)) as OutboxRow[],
    );
    return rows.map(toMessage);
  }

  async restore(messages: readonly OutboxMessage[]): Promise<void> {
    // An upsert on id keeps the row's seq: its place in the queue stays. One transaction per page.
    this.run(() =>
      this.connection.write(() => {
        const statement = this.connection.prepare(
          `${insert} ON CONFLICT (id) DO UPDATE SET grp = excluded.grp, event = excluded.event, channel = excluded.channel,
             subject = excluded.subject, text = excluded.text, payload = excluded.payload,
             created_at = excluded.created_at, status = excluded.status, attempts = excluded.attempts,
             next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error,
             delivered_at = excluded.delivered_at`,
        );
        for (const message of messages) statement.run(toRow(message));
      }),
    );
  }

  async countPending(now: Date): Promise<OutboxPending> {
    // Two counts on the outbox_due index (status, next_attempt_at), however many messages were delivered.
    const row = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT (SELECT COUNT(*) FROM outbox WHERE status = 'pending' AND next_attempt_at <= ?) AS due,
                    (SELECT COUNT(*) FROM outbox WHERE status = 'pending' AND next_attempt_at > ?) AS deferred`,
          )
          .get(now.getTime(), now.getTime()) as { due: number; deferred: number },
    );
    return { due: row.due, deferred: row.deferred };
  }

  async list(group: string, limit: number): Promise<OutboxMessage[]> {
    if (!(limit > 0)) return [];
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns} FROM outbox WHERE grp = ? ORDER BY seq DESC LIMIT ?`)
          .all(group, Math.floor(limit)) as OutboxRow[],
    );
    return rows.map(toMessage);
  }
}
