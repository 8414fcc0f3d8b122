import { readSetting } from '../groups/group-settings.js';
import { type Notification } from '../notifications/notification.js';
import { requireEmail } from '../users/user.js';

/** What a group can be told about: an alert opened, an alert (or "no data") over, "no data", a rule's switch. */
export const alertEvents = ['opened', 'resolved', 'no-data', 'switched'] as const;
export type AlertEvent = (typeof alertEvents)[number];
export const defaultAlertEvents: readonly AlertEvent[] = ['opened', 'resolved', 'no-data'];

/**
 * The body a webhook is sent: `json` is Hortus's own (the default); the others are the shape that service
 * takes at its publish URL (ntfy: text with Title/Priority/Tags headers; Gotify: {title, message,
 * priority}; Slack incoming webhooks: {text}; Discord: {content}).
 */
export const webhookFormats = ['json', 'ntfy', 'gotify', 'slack', 'discord'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];

export interface Webhook {
  readonly url: string;
  /** Key of the HMAC-SHA256 signature the receiver checks. */
  readonly secret: string;
  /** Absent: `json` (hooks stored before formats existed have none). */
  readonly format?: WebhookFormat;
}

/** Where a group's alerts go besides e-mail (which the group settings the client writes decide). */
export interface GroupNotifySettings {
  readonly group: string;
  readonly webhooks: readonly Webhook[];
  readonly events: readonly AlertEvent[];
}

export type Channel =
  | { readonly type: 'email'; readonly to: string }
  | {
      readonly type: 'webhook';
      readonly url: string;
      readonly secret: string;
      readonly format?: WebhookFormat;
    };

/** `cancelled`: its webhook was removed before it went out; it is never sent and no longer holds the secret. */
export type OutboxStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

/** One message to one channel. It stays in the store until delivered, so a restart loses none. */
export interface OutboxMessage {
  readonly id: string;
  readonly group: string;
  readonly event: AlertEvent;
  readonly channel: Channel;
  readonly subject: string;
  readonly text: string;
  /** The JSON a webhook receives. */
  readonly payload: Readonly<Record<string, string | number | boolean | null>>;
  readonly createdAt: Date;
  readonly status: OutboxStatus;
  /** Delivery attempts begun so far. */
  readonly attempts: number;
  /** A pending message is not tried before this (a retry's backoff, or another worker's lease). */
  readonly nextAttemptAt: Date;
  readonly lastError?: string;
  readonly deliveredAt?: Date;
}

export type NewOutboxMessage = Pick<
  OutboxMessage,
  'group' | 'event' | 'channel' | 'subject' | 'text' | 'payload' | 'createdAt'
>;

/** An alert notification as the engine raised it, with what it means. */
export interface AlertChange {
  readonly notification: Notification;
  readonly event: Exclude<AlertEvent, 'switched'>;
  /** A critical alert sent again, not yet acknowledged: how many times so far (1 for the first reminder). */
  readonly repeat?: number;
}

/** The client writes `emailNotification` as a boolean, or as text from a form. */
export function wantsEmail(settings: unknown): string | undefined {
  const on = readSetting(settings, 'emailNotification');
  if (on !== true && on !== 'true') return undefined;
  try {
    return requireEmail(readSetting(settings, 'email'));
  } catch {
    return undefined;
  }
}
