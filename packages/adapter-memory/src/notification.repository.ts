import { inject, injectable } from 'inversify';
import {
  type Acknowledgement,
  type ImportedNotification,
  type NewNotification,
  type Notification,
  notificationCopy,
  type NotificationRepository,
  readIgnoreState,
  type Severity,
  type StoredIgnoreState,
} from '@hortus/core';
import { newId } from './ids.js';
import { GroupRevisions, MEMORY_CHANGES, MemoryChanges } from './revisions.js';

interface StoredNotification {
  readonly id: string;
  readonly group: string;
  readonly timeMs: number;
  readonly message: string;
  ignore: StoredIgnoreState;
  readonly topic?: string;
  readonly value?: number;
  readonly severity?: Severity;
  acknowledged?: Acknowledgement;
}

interface GroupNotifications {
  /** In creation order, so the newest is last. */
  readonly created: StoredNotification[];
  readonly byTime: Map<number, StoredNotification[]>;
}

function toNotification(stored: StoredNotification): Notification {
  return {
    id: stored.id,
    group: stored.group,
    time: new Date(stored.timeMs),
    message: stored.message,
    ignore: readIgnoreState(stored.ignore),
    ...(stored.topic === undefined ? {} : { topic: stored.topic }),
    ...(stored.value === undefined ? {} : { value: stored.value }),
    ...(stored.severity === undefined ? {} : { severity: stored.severity }),
    ...(stored.acknowledged === undefined
      ? {}
      : { acknowledged: { at: new Date(stored.acknowledged.at), by: { ...stored.acknowledged.by } } }),
  };
}

/** Notifications per group, in creation order and indexed by time for the ignore route. */
@injectable()
export class InMemoryNotificationRepository implements NotificationRepository {
  private readonly byGroup = new Map<string, GroupNotifications>();
  private readonly revisions: GroupRevisions;

  /** `changes`: the store's journal the change feed reads; shared by the store's four counted repositories. */
  constructor(@inject(MEMORY_CHANGES) changes: MemoryChanges = new MemoryChanges()) {
    this.revisions = new GroupRevisions(changes);
  }

  async revision(group: string): Promise<string> {
    return this.revisions.current(group);
  }

  async deleteByGroup(group: string): Promise<number> {
    const removed = this.byGroup.get(group)?.created.length ?? 0;
    this.byGroup.delete(group);
    if (removed > 0) this.revisions.bump(group);
    return removed;
  }

  async create(notification: NewNotification): Promise<Notification> {
    return toNotification(this.store({ ...notification, ignore: 'false' }));
  }

  async addMissing(notifications: readonly ImportedNotification[]): Promise<number> {
    let added = 0;
    for (const notification of notifications) {
      const sameTime = this.byGroup.get(notification.group)?.byTime.get(notification.time.getTime()) ?? [];
      if (sameTime.some((stored) => stored.message === notification.message)) continue;
      this.store(notification);
      added += 1;
    }
    return added;
  }

  private store(notification: ImportedNotification): StoredNotification {
    const stored: StoredNotification = {
      id: newId(),
      group: notification.group,
      timeMs: notification.time.getTime(),
      message: notification.message,
      ignore: notification.ignore,
      ...(notification.topic === undefined ? {} : { topic: notification.topic }),
      ...(notification.value === undefined ? {} : { value: notification.value }),
      ...(notification.severity === undefined ? {} : { severity: notification.severity }),
      ...(notification.acknowledged === undefined
        ? {}
        : {
            acknowledged: {
              at: new Date(notification.acknowledged.at),
              by: { ...notification.acknowledged.by },
            },
          }),
    };
    let group = this.byGroup.get(stored.group);
    if (group === undefined) {
      group = { created: [], byTime: new Map() };
      this.byGroup.set(stored.group, group);
    }
    group.created.push(stored);
    this.revisions.bump(stored.group);
    const sameTime = group.byTime.get(stored.timeMs);
    if (sameTime === undefined) group.byTime.set(stored.timeMs, [stored]);
    else sameTime.push(stored);
    return stored;
  }

  async listOpen(group: string): Promise<Notification[]> {
    const created = this.byGroup.get(group)?.created ?? [];
    const open: Notification[] = [];
    for (let index = created.length - 1; index >= 0; index -= 1) {
      const stored = created[index] as StoredNotification;
      if (stored.ignore === 'false') open.push(toNotification(stored));
    }
    return open;
  }

  async listCopies(group: string): Promise<ImportedNotification[]> {
    return (this.byGroup.get(group)?.created ?? []).map((stored) =>
      notificationCopy(toNotification(stored), stored.ignore),
    );
  }

  async find(group: string, id: string): Promise<Notification | undefined> {
    const found = this.byGroup.get(group)?.created.find((stored) => stored.id === id);
    return found === undefined ? undefined : toNotification(found);
  }

  async acknowledge(
    group: string,
    id: string,
    acknowledgement: Acknowledgement,
  ): Promise<Notification | undefined> {
    const found = this.byGroup.get(group)?.created.find((stored) => stored.id === id);
    if (found === undefined) return undefined;
    if (found.acknowledged === undefined) {
      found.acknowledged = { at: new Date(acknowledgement.at), by: { ...acknowledgement.by } };
      this.revisions.bump(group);
    }
    return toNotification(found);
  }

  async countOpen(group: string): Promise<number> {
    let open = 0;
    for (const stored of this.byGroup.get(group)?.created ?? []) if (stored.ignore === 'false') open += 1;
    return open;
  }

  /** Counts matches, not changes: one already ignored still matches, as Mongo's matchedCount does. */
  async ignoreAt(group: string, times: readonly Date[]): Promise<number> {
    const byTime = this.byGroup.get(group)?.byTime;
    if (byTime === undefined) return 0;
    let matched = 0;
    for (const timeMs of new Set(times.map((time) => time.getTime()))) {
      for (const stored of byTime.get(timeMs) ?? []) {
        stored.ignore = 'true';
        matched += 1;
      }
    }
    if (matched > 0) this.revisions.bump(group);
    return matched;
  }
}
