import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Notification } from './notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from './notification.port.js';

@injectable()
export class ListOpenNotifications {
  constructor(@inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository) {}

  async execute(input: { group: unknown }): Promise<Notification[]> {
    return this.notifications.listOpen(requireText(input.group, 'groupId'));
  }
}
