import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { QuotaExceededError } from '../shared/errors.js';
import { CORE_LIMITS, type CoreLimits } from '../shared/settings.js';
import {
  optionalDate,
  optionalNumber,
  optionalText,
  requireText,
  TEXT_MAX_LENGTH,
} from '../shared/validation.js';
import { type Notification } from './notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from './notification.port.js';

@injectable()
export class CreateNotification {
  constructor(
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
  ) {}

  async execute(input: {
    group: unknown;
    message: unknown;
    time?: unknown;
    topic?: unknown;
    value?: unknown;
  }): Promise<Notification> {
    const topic = optionalText(input.topic, 'topic', 200);
    const value = optionalNumber(input.value, 'value');
    const group = requireText(input.group, 'group');
    const message = requireText(input.message, 'message', TEXT_MAX_LENGTH);
    const time = optionalDate(input.time, 'time') ?? this.clock.now();
    const cap = this.limits.maxOpenNotificationsPerGroup;
    if ((await this.notifications.countOpen(group)) >= cap) {
      throw new QuotaExceededError(
        'notification',
        cap,
        `Group ${group} already holds ${cap} open notifications, the most allowed: ignore some first`,
      );
    }
    return this.notifications.create({
      group,
      message,
      time,
      ...(topic === undefined ? {} : { topic }),
      ...(value === undefined ? {} : { value }),
    });
  }
}
