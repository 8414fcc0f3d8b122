import {
  type Acknowledgement,
  type ImportedNotification,
  type NewNotification,
  type Notification,
} from './notification.js';

export interface NotificationRepository {
  /** Stores a new notification with ignore `false`. */
  create(notification: NewNotification): Promise<Notification>;
  /**
   * Stores notifications moved from another system with their ignore state, skipping each one whose
   * (group, time, message) is stored already or came earlier in the list; answers how many were stored.
   */
  addMissing(notifications: readonly ImportedNotification[]): Promise<number>;
  /**
   * Every notification of the group, ignored ones too, with its stored ignore state, oldest first
   * (`hortus store copy`, which writes them with addMissing).
   */
  listCopies(group: string): Promise<ImportedNotification[]>;
  /** Notifications of the group with ignore `false`, the most recently created first. */
  listOpen(group: string): Promise<Notification[]>;
  /** Sets ignore `true` on every notification of the group whose time is one of `times`; answers how many matched. */
  ignoreAt(group: string, times: readonly Date[]): Promise<number>;
  /** The notification of the group with this id, ignored or not; undefined when none (or not an id). */
  find(group: string, id: string): Promise<Notification | undefined>;
  /**
   * Records the acknowledgement on the notification of the group with this id, unless it has one already
   * (the first stays); answers the notification as stored then, or undefined when there is none.
   */
  acknowledge(group: string, id: string, acknowledgement: Acknowledgement): Promise<Notification | undefined>;
  /** How many notifications of the group have ignore `false`. */
  countOpen(group: string): Promise<number>;
  /** Removes every notification of the group, ignored ones too; answers how many. */
  deleteByGroup(group: string): Promise<number>;
  /**
   * Opaque text that changes whenever a write changes what `listOpen` answers for the group (it may also
   * change when nothing did); never a value it had before, even across a restart of a store that keeps
   * nothing. Equal texts mean the group's notifications are unchanged.
   */
  revision(group: string): Promise<string>;
}

export const NOTIFICATION_REPOSITORY = Symbol.for('hortus.NotificationRepository');
