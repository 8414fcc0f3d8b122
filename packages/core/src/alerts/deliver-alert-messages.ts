import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { type OutboxMessage } from './alert-message.js';
import { ALERT_OUTBOX_REPOSITORY, type AlertOutboxRepository } from './alert-outbox.port.js';
import { NOTIFIER, type Notifier } from './notifier.port.js';

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
