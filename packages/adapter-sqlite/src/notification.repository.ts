import { inject, injectable } from 'inversify';
import {
  type ImportedNotification,
  type NewNotification,
  type Notification,
  notificationCopy,
  type NotificationRepository,
  readIgnoreState,
  type StoredIgnoreState,
} from '@hortus/core';
import { newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';
import { SqliteRevisions } from './revisions.js';

interface NotificationRow {
  id: string;
  grp: string;
  time: number;
  message: string;
  ignore: string;
  topic: string | null;
  value: number | null;
}

const notificationMapper = {
  toRow(notification: NewNotification, ignore: StoredIgnoreState = 'false'): NotificationRow {
    return {
      id: newId(),
      grp: notification.group,
      time: notification.time.getTime(),
      message: notification.message,
      ignore,
      topic: notification.topic ?? null,
      value: notification.value ?? null,
    };
  },
  toEntity(row: NotificationRow): Notification {
    return {
      id: row.id,
      group: row.grp,
      time: new Date(row.time),
      message: row.message,
      ignore: readIgnoreState(row.ignore),
      ...(row.topic === null ? {} : { topic: row.topic }),
      ...(row.value === null ? {} : { value: Number(row.value) }),
    };
  },
};

const columns = 'id, grp, time, message, ignore, topic, value';

@injectable()
export class SqliteNotificationRepository extends SqliteRepository implements NotificationRepository {
  private readonly revisions: SqliteRevisions;

  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'notification', 'That notification is already stored');
    this.revisions = new SqliteRevisions(connection, 'notifications');
  }

  async revision(group: string): Promise<string> {
    return this.run(() => this.revisions.current(group));
  }

  /** Every write bumps the group's revision in its own transaction. */
  async create(notification: NewNotification): Promise<Notification> {
    const row = notificationMapper.toRow(notification);
    this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare(
            `INSERT INTO notifications (${columns}) VALUES (@id, @grp, @time, @message, @ignore, @topic, @value)`,
          )
          .run(row);
        this.revisions.bump([row.grp]);
      }),
    );
    return notificationMapper.toEntity(row);
  }

  /** One transaction: the lookups on (grp, time) and the inserts see the same file. */
  async addMissing(notifications: readonly ImportedNotification[]): Promise<number> {
    if (notifications.length === 0) return 0;
    return this.run(() =>
      this.connection.write(() => {
        const exists = this.connection.prepare(
          'SELECT 1 FROM notifications WHERE grp = ? AND time = ? AND message = ?',
        );
        const insert = this.connection.prepare(
          `INSERT INTO notifications (${columns}) VALUES (@id, @grp, @time, @message, @ignore, @topic, @value)`,
        );
        let added = 0;
        for (const notification of notifications) {
          const row = notificationMapper.toRow(notification, notification.ignore);
          if (exists.get(row.grp, row.time, row.message) !== undefined) continue;
          insert.run(row);
          this.revisions.bump([row.grp]);
          added += 1;
        }
        return added;
      }),
    );
  }

  async listOpen(group: string): Promise<Notification[]> {
    // seq grows with every insert, so seq descending is "most recently created first".
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT ${columns} FROM notifications WHERE grp = ? AND ignore = 'false' ORDER BY seq DESC`,
          )
          .all(group) as NotificationRow[],
    );
    return rows.map(notificationMapper.toEntity);
  }

  async listCopies(group: string): Promise<ImportedNotification[]> {
    const rows = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns} FROM notifications WHERE grp = ? ORDER BY seq`)
          .all(group) as NotificationRow[],
    );
    return rows.map((row) =>
      notificationCopy(notificationMapper.toEntity(row), row.ignore as StoredIgnoreState),
    );
  }

  async deleteByGroup(group: string): Promise<number> {
    return this.run(() =>
      this.connection.write(() => {
        const removed = this.connection.prepare('DELETE FROM notifications WHERE grp = ?').run(group).changes;
        if (removed > 0) this.revisions.bump([group]);
        return removed;
      }),
    );
  }

  async countOpen(group: string): Promise<number> {
    // Served by the notifications_open index.
    const row = this.run(
      () =>
        this.connection
          .prepare(`SELECT count(*) AS open FROM notifications WHERE grp = ? AND ignore = 'false'`)
          .get(group) as { open: number },
    );
    return row.open;
  }

  async ignoreAt(group: string, times: readonly Date[]): Promise<number> {
    const distinct = [...new Set(times.map((time) => time.getTime()))];
    if (distinct.length === 0) return 0;
    return this.run(() =>
      this.connection.write(() => {
        // One statement per time keeps the SQL cacheable whatever the list's length.
        const update = this.connection.prepare(
          `UPDATE notifications SET ignore = 'true' WHERE grp = ? AND time = ?`,
        );
        const matched = distinct.reduce((sum, time) => sum + update.run(group, time).changes, 0);
        if (matched > 0) this.revisions.bump([group]);
        return matched;
      }),
    );
  }
}
