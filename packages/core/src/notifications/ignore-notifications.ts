import { inject, injectable } from 'inversify';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireDate, requireText } from '../shared/validation.js';
import { MAX_IGNORE_TIMES } from './notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from './notification.port.js';

@injectable()
export class IgnoreNotifications {
  constructor(@inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository) {}

  /**
   * docs/api.md, Notifications: with `times`, every match is ignored and no match is no error; with only `time`,
   * no match is a not-found. Answers how many notifications matched.
   */
  async execute(input: { group: unknown; time?: unknown; times?: unknown }): Promise<number> {
    const group = requireText(input.group, 'groupId');
    if (input.times !== undefined && input.times !== null) {
      if (!Array.isArray(input.times))
        throw InvalidInputError.forField('times', 'must be an array of date-times');
      if (input.times.length > MAX_IGNORE_TIMES) {
        throw InvalidInputError.forField('times', `must hold at most ${MAX_IGNORE_TIMES} items`);
      }
      const times = input.times.map((time: unknown, i) => requireDate(time, `times[${i}]`));
      return times.length === 0 ? 0 : this.notifications.ignoreAt(group, times);
    }
    if (input.time !== undefined && input.time !== null) {
      const matched = await this.notifications.ignoreAt(group, [requireDate(input.time, 'time')]);
      if (matched === 0) throw new NotFoundError('notification', 'Notification not found');
      return matched;
    }
    throw new InvalidInputError('No time or times provided');
  }
}
