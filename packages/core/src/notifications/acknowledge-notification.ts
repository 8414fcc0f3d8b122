import { inject, injectable } from 'inversify';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NameActor } from '../shared/name-actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Notification } from './notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from './notification.port.js';

/**
 * "Seen, on it": records who acknowledged a notification and when. The notification stays listed (ignoring
 * it is what hides it, as in the original client); a critical alert is no longer sent again once
 * acknowledged. Acknowledging twice keeps the first.
 */
@injectable()
export class AcknowledgeNotification {
  constructor(
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(NameActor) private readonly nameActor: NameActor,
  ) {}

  async execute(input: { group: unknown; id: unknown; actor: Actor }): Promise<Notification> {
    const group = requireText(input.group, 'groupId');
    const id = requireText(input.id, 'id', 64);
    const acknowledged = await this.notifications.acknowledge(group, id, {
      at: this.clock.now(),
      by: await this.nameActor.execute({ ...input.actor }),
    });
    if (acknowledged === undefined) throw new NotFoundError('notification', 'Notification not found');
    return acknowledged;
  }
}
