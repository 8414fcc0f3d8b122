import { type GroupNotifySettings, type NewOutboxMessage, type OutboxMessage } from './alert-message.js';

/** The outbox's pending messages at one time (its depth, for the metrics). */
export interface OutboxPending {
  /** Due: the next delivery round takes them. */
  readonly due: number;
  /** Not due yet: leased by a worker sending them, or waiting out a retry's backoff. */
  readonly deferred: number;
}

/** The outbox (at-least-once delivery that survives restarts) and each group's notify settings. */
export interface AlertOutboxRepository {
  getSettings(group: string): Promise<GroupNotifySettings | undefined>;
  saveSettings(settings: GroupNotifySettings): Promise<void>;
  /** Stores the messages as pending, due at once. */
  enqueue(messages: readonly NewOutboxMessage[]): Promise<OutboxMessage[]>;
  /**
   * Takes up to `limit` pending messages due at `now`, oldest first, and leases each: attempts + 1 and
   * due again only after `leaseMs`, so no other worker takes it meanwhile (and a worker that dies
   * mid-delivery leaves it to be tried again).
   */
  claimDue(now: Date, leaseMs: number, limit: number): Promise<OutboxMessage[]>;
  /**
   * Only a pending (or leased) message changes: a cancelled one stays cancelled. A webhook message keeps
   * no secret once settled (delivered, or failed for good): only what may still be sent holds one.
   */
  markDelivered(id: string, at: Date): Promise<void>;
  /** Pending again from `retryAt`, or given up (`failed`) without one; a cancelled message stays cancelled. */
  markFailed(id: string, error: string, retryAt: Date | undefined): Promise<void>;
  /**
   * Cancels every pending message (leased ones too) of the group to the webhook with this URL, and blanks
   * the secret they carry; `reason` becomes their last error. Answers how many were cancelled.
   */
  cancelWebhook(group: string, url: string, reason: string): Promise<number>;
  /**
   * For a deleted group: drops its notify settings (webhooks, secrets) and cancels every pending message of
   * it, as `cancelWebhook` does. Answers how many messages were cancelled.
   */
  forgetGroup(group: string, reason: string): Promise<number>;
  /** How many messages are pending, and how many of them are due at `now`. */
  countPending(now: Date): Promise<OutboxPending>;
  /** A group's messages, newest first. */
  list(group: string, limit: number): Promise<OutboxMessage[]>;
  /**
   * Every message of every group, whatever its status (`hortus store copy`): at most `limit`, each group's
   * in the order queued, starting after the message `after` that the previous page ended with.
   */
  listCopies(after: string | undefined, limit: number): Promise<OutboxMessage[]>;
  /**
   * Stores messages copied from another store as they are (id, status, attempts, times, secret), each
   * replacing the message with its id: copying them again changes nothing. One page, written together.
   */
  restore(messages: readonly OutboxMessage[]): Promise<void>;
}

export const ALERT_OUTBOX_REPOSITORY = Symbol.for('hortus.AlertOutboxRepository');
