import { inject, injectable } from 'inversify';
import { type AutomationEvent } from '../automations/automation-event.js';
import { type Group } from '../groups/group.js';
import {
  type AlertChange,
  type Channel,
  defaultAlertEvents,
  type NewOutboxMessage,
  type OutboxMessage,
  wantsEmail,
} from './alert-message.js';
import { ALERT_OUTBOX_REPOSITORY, type AlertOutboxRepository } from './alert-outbox.port.js';

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
      ...changes.map(({ notification, event, repeat }) => ({
        event,
        time: notification.time,
        message:
          repeat === undefined
            ? notification.message
            : `Reminder ${repeat}, not acknowledged: ${notification.message}`,
        extra: {
          notificationId: notification.id,
          ...(notification.severity === undefined ? {} : { severity: notification.severity }),
          ...(repeat === undefined ? {} : { repeat }),
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
