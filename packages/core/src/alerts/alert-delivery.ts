import { inject, injectable } from 'inversify';
import { type AutomationEvent } from '../automations/automation-event.js';
import { readSetting } from '../groups/group-settings.js';
import { type Group } from '../groups/group.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type Notification } from '../notifications/notification.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireEmail } from '../users/user.js';

/** What a group can be told about: an alert opened, an alert (or "no data") over, "no data", a rule's switch. */
export const alertEvents = ['opened', 'resolved', 'no-data', 'switched'] as const;
export type AlertEvent = (typeof alertEvents)[number];
export const defaultAlertEvents: readonly AlertEvent[] = ['opened', 'resolved', 'no-data'];

export interface Webhook {
  readonly url: string;
  /** Key of the HMAC-SHA256 signature the receiver checks. */
  readonly secret: string;
}

/** Where a group's alerts go besides e-mail (which the group settings the client writes decide). */
export interface GroupNotifySettings {
  readonly group: string;
  readonly webhooks: readonly Webhook[];
  readonly events: readonly AlertEvent[];
}

export type Channel =
  | { readonly type: 'email'; readonly to: string }
  | { readonly type: 'webhook'; readonly url: string; readonly secret: string };

export type OutboxStatus = 'pending' | 'delivered' | 'failed';

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
  markDelivered(id: string, at: Date): Promise<void>;
  /** Pending again from `retryAt`, or given up (`failed`) without one. */
  markFailed(id: string, error: string, retryAt: Date | undefined): Promise<void>;
  /** A group's messages, newest first. */
  list(group: string, limit: number): Promise<OutboxMessage[]>;
}

export const ALERT_OUTBOX_REPOSITORY = Symbol.for('hortus.AlertOutboxRepository');

/** Hands one message to its channel (mail server, webhook receiver); rejects when it was not taken. */
export interface Notifier {
  deliver(message: OutboxMessage): Promise<void>;
}

export const NOTIFIER = Symbol.for('hortus.Notifier');

/** An alert notification as the engine raised it, with what it means. */
export interface AlertChange {
  readonly notification: Notification;
  readonly event: Exclude<AlertEvent, 'switched'>;
}

/** The client writes `emailNotification` as a boolean, or as text from a form. */
function wantsEmail(settings: unknown): string | undefined {
  const on = readSetting(settings, 'emailNotification');
  if (on !== true && on !== 'true') return undefined;
  try {
    return requireEmail(readSetting(settings, 'email'));
  } catch {
    return undefined;
  }
}

/**
 * Turns what one tick raised for a group into outbox messages, one per channel: the group's e-mail when
 * its settings ask for it, and each webhook, for the events the group chose.
 */
@injectable()
export class QueueAlertMessages {
  constructor(@inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository) {}

  async execute(
    group: Group,
    changes: readonly AlertChange[],
    switched: readonly AutomationEvent[],
  ): Promise<OutboxMessage[]> {
    if (changes.length === 0 && switched.length === 0) return [];
    const notify = await this.outbox.getSettings(group.name);
    const events = notify?.events ?? defaultAlertEvents;
    const email = wantsEmail(group.settings);
    const channels: Channel[] = [
      ...(email === undefined ? [] : [{ type: 'email' as const, to: email }]),
      ...(notify?.webhooks ?? []).map((hook) => ({ type: 'webhook' as const, ...hook })),
    ];
    if (channels.length === 0) return [];
    const items = [
      ...changes.map(({ notification, event }) => ({
        event,
        time: notification.time,
        message: notification.message,
        extra: {
          notificationId: notification.id,
          ...(notification.topic === undefined ? {} : { topic: notification.topic }),
          ...(notification.value === undefined ? {} : { value: notification.value }),
        },
      })),
      ...switched.map((e) => ({
        event: 'switched' as const,
        time: e.at,
        message: `${e.object} switched ${e.previousValue} -> ${e.value} by ${e.rule}${e.late === true ? ' (late)' : ''}`,
        extra: { object: e.object, value: e.value, rule: e.rule },
      })),
    ].filter((item) => events.includes(item.event));
    const messages: NewOutboxMessage[] = items.flatMap((item) =>
      channels.map((channel) => ({
        group: group.name,
        event: item.event,
        channel,
        subject: `[Hortus] ${group.name}: ${item.message}`,
        text: `${item.message}\n\nGroup: ${group.name}\nTime: ${item.time.toISOString()}\n`,
        payload: {
          group: group.name,
          event: item.event,
          message: item.message,
          time: item.time.toISOString(),
          ...item.extra,
        },
        createdAt: item.time,
      })),
    );
    return messages.length === 0 ? [] : this.outbox.enqueue(messages);
  }
}

export interface DeliveryRound {
  readonly delivered: readonly OutboxMessage[];
  readonly retrying: readonly { message: OutboxMessage; error: string }[];
  readonly failed: readonly { message: OutboxMessage; error: string }[];
}

/** Attempts before a message is given up, and the backoff between them (30 s doubling, at most 1 h). */
export const MAX_DELIVERY_ATTEMPTS = 10;
const LEASE_MS = 2 * 60_000;
export function deliveryBackoffMs(attempts: number): number {
  return Math.min(30_000 * 2 ** (attempts - 1), 3_600_000);
}

/** One round of the delivery worker: what is due goes out; what fails is retried later with backoff. */
@injectable()
export class DeliverAlertMessages {
  constructor(
    @inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository,
    @inject(NOTIFIER) private readonly notifier: Notifier,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(limit = 50): Promise<DeliveryRound> {
    const round = { delivered: [] as OutboxMessage[], retrying: [], failed: [] } as {
      delivered: OutboxMessage[];
      retrying: { message: OutboxMessage; error: string }[];
      failed: { message: OutboxMessage; error: string }[];
    };
    for (const message of await this.outbox.claimDue(this.clock.now(), LEASE_MS, limit)) {
      try {
        await this.notifier.deliver(message);
        await this.outbox.markDelivered(message.id, this.clock.now());
        round.delivered.push(message);
      } catch (cause) {
        const error = (cause instanceof Error ? cause.message : String(cause)).slice(0, 500);
        const giveUp = message.attempts >= MAX_DELIVERY_ATTEMPTS;
        const retryAt = new Date(this.clock.now().getTime() + deliveryBackoffMs(message.attempts));
        await this.outbox.markFailed(message.id, error, giveUp ? undefined : retryAt);
        (giveUp ? round.failed : round.retrying).push({ message, error });
      }
    }
    return round;
  }
}

export interface NotifyChange {
  readonly group: string;
  readonly addWebhook?: Webhook;
  readonly removeWebhook?: string;
  readonly events?: readonly string[];
}

function requireWebhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw InvalidInputError.forField('url', `"${value}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw InvalidInputError.forField('url', 'must be an http:// or https:// URL');
  return url.toString();
}

/** Shows or changes where a group's alerts go (webhooks) and which events are sent. */
@injectable()
export class ConfigureGroupNotify {
  constructor(
    @inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
  ) {}

  async execute(change: NotifyChange): Promise<GroupNotifySettings & { readonly email?: string }> {
    const group = await this.groups.findByName(change.group);
    if (group === undefined) throw new NotFoundError('group', `Group ${change.group} not found`);
    const current = (await this.outbox.getSettings(group.name)) ?? {
      group: group.name,
      webhooks: [],
      events: defaultAlertEvents,
    };
    let { webhooks, events } = current;
    if (change.removeWebhook !== undefined) {
      const url = requireWebhookUrl(change.removeWebhook);
      if (!webhooks.some((hook) => hook.url === url))
        throw new NotFoundError('group', `Group ${group.name} has no webhook ${url}`);
      webhooks = webhooks.filter((hook) => hook.url !== url);
    }
    if (change.addWebhook !== undefined) {
      const url = requireWebhookUrl(change.addWebhook.url);
      if (change.addWebhook.secret.length < 16)
        throw InvalidInputError.forField('secret', 'must be at least 16 characters');
      webhooks = [...webhooks.filter((hook) => hook.url !== url), { url, secret: change.addWebhook.secret }];
    }
    if (change.events !== undefined) {
      const unknown = change.events.filter((event) => !(alertEvents as readonly string[]).includes(event));
      if (unknown.length > 0)
        throw InvalidInputError.forField(
          'events',
          `must be among ${alertEvents.join(', ')}; got ${unknown.join(', ')}`,
        );
      events = alertEvents.filter((event) => change.events?.includes(event));
    }
    const next = { group: group.name, webhooks, events };
    if (change.addWebhook !== undefined || change.removeWebhook !== undefined || change.events !== undefined)
      await this.outbox.saveSettings(next);
    const email = wantsEmail(group.settings);
    return { ...next, ...(email === undefined ? {} : { email }) };
  }
}
