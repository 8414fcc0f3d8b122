import { inject, injectable } from 'inversify';
import {
  type Acknowledgement,
  actorFromText,
  actorText,
  type ImportedNotification,
  type NewNotification,
  type Notification,
  notificationCopy,
  type NotificationRepository,
  readIgnoreState,
  readSeverity,
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
  severity: string | null;
  ack_at: number | null;
  ack_by: string | null;
}

const notificationMapper = {
  toRow(
    notification: NewNotification & { readonly acknowledged?: Acknowledgement },
    ignore: StoredIgnoreState = 'false',
  ): NotificationRow {
    return {
      id: newId(),
      grp: notification.group,
      time: notification.time.getTime(),
      message: notification.message,
      ignore,
      topic: notification.topic ?? null,
      value: notification.value ?? null,
      severity: notification.severity ?? null,
      ack_at: notification.acknowledged?.at.getTime() ?? null,
      ack_by: notification.acknowledged === undefined ? null : actorText(notification.acknowledged.by),
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
      ...acknowledgedOf(row),
    };
  },
};

function acknowledgedOf(row: NotificationRow): Pick<Notification, 'severity' | 'acknowledged'> {
  const severity = readSeverity(row.severity);
  const by = actorFromText(row.ack_by);
  return {
    ...(severity === undefined ? {} : { severity }),
    ...(row.ack_at === null || by === undefined ? {} : { acknowledged: { at: new Date(row.ack_at), by } }),
  };
}

const columns = 'id, grp, time, message, ignore, topic, value, severity, ack_at, ack_by';
const values = '@id, @grp, @time, @message, @ignore, @topic, @value, @severity, @ack_at, @ack_by';

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
        this.connection.prepare(`INSERT INTO notifications (${columns}) VALUES (${values})`).run(row);
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
        const insert = this.connection.prepare(`INSERT INTO notifications (${columns}) VALUES (${values})`);
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

  async find(group: string, id: string): Promise<Notification | undefined> {
    const row = this.run(
      () =>
        this.connection
          .prepare(`SELECT ${columns} FROM notifications WHERE grp = ? AND id = ?`)
          .get(group, id) as NotificationRow | undefined,
    );
    return row === undefined ? undefined : notificationMapper.toEntity(row);
  }

  /** One transaction: the first acknowledgement stays, and the revision moves only when one is written. */
  async acknowledge(
    group: string,
    id: string,
    acknowledgement: Acknowledgement,
  ): Promise<Notification | undefined> {
    const row = this.run(() =>
      this.connection.write(() => {
        const changed = this.connection
          .prepare(
            'UPDATE notifications SET ack_at = ?, ack_by = ? WHERE grp = ? AND id = ? AND ack_at IS NULL',
          )
          .run(acknowledgement.at.getTime(), actorText(acknowledgement.by), group, id).changes;
        if (changed > 0) this.revisions.bump([group]);
        return this.connection
          .prepare(`SELECT ${columns} FROM notifications WHERE grp = ? AND id = ?`)
          .get(group, id) as NotificationRow | undefined;
      }),
    );
    return row === undefined ? undefined : notificationMapper.toEntity(row);
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
