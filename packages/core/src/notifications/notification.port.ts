import { type NewNotification, type Notification } from './notification.js';

export interface NotificationRepository {
  /** Stores a new notification with ignore `false`. */
  create(notification: NewNotification): Promise<Notification>;
  /** Notifications of the group with ignore `false`, the most recently created first. */
  listOpen(group: string): Promise<Notification[]>;
  /** Sets ignore `true` on every notification of the group whose time is one of `times`; answers how many matched. */
  ignoreAt(group: string, times: readonly Date[]): Promise<number>;
}

export const NOTIFICATION_REPOSITORY = Symbol.for('hortus.NotificationRepository');
