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
import { groupTimeZone } from '../groups/group-settings.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { formatLocalTime } from '../shared/time-zone.js';

/**
 * Turns what one tick raised for a group into outbox messages, one per channel: the group's e-mail when
 * its settings ask for it, and each webhook, for the events the group chose.
 */
@injectable()
export class QueueAlertMessages {
  constructor(
    @inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository,
    @inject(CORE_SETTINGS) private readonly settings: CoreSettings,
  ) {}

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
    const timeZone = groupTimeZone(group.settings, this.settings.timeZone);
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
        // People read the text in the group's local time; the payload is for programs, in UTC.
        text: `${item.message}\n\nGroup: ${group.name}\nTime: ${formatLocalTime(item.time, timeZone)}\n`,
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
