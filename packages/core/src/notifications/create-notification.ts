import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
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
    return this.notifications.create({
      group: requireText(input.group, 'group'),
      message: requireText(input.message, 'message', TEXT_MAX_LENGTH),
      time: optionalDate(input.time, 'time') ?? this.clock.now(),
      ...(topic === undefined ? {} : { topic }),
      ...(value === undefined ? {} : { value }),
    });
  }
}
