import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { type Channel, type OutboxMessage } from './alert-message.js';
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

/** Destinations (one e-mail address, one webhook URL) sent to at once, by one process. */
export const ALERT_DELIVERY_CONCURRENCY = 8;

/** Messages to one destination are sent one after another, in order; different destinations do not wait. */
function destinationOf(channel: Channel): string {
  return channel.type === 'email' ? `email:${channel.to.toLowerCase()}` : `webhook:${channel.url}`;
}

interface RoundResult {
  delivered: OutboxMessage[];
  retrying: { message: OutboxMessage; error: string }[];
  failed: { message: OutboxMessage; error: string }[];
}

/**
 * The delivery worker's rounds: what is due goes out; what fails is retried later with backoff. Each
 * destination has a lane, so a receiver that hangs (up to its timeout) or is dead holds back only its own
 * messages, and up to ALERT_DELIVERY_CONCURRENCY destinations are sent to at once. Rounds may overlap: a new
 * one takes what came due meanwhile while a slow lane of an earlier one is still busy.
 */
@injectable()
export class DeliverAlertMessages {
  /** The tail of each busy destination's lane; a new batch for it starts after it. */
  private readonly lanes = new Map<string, Promise<void>>();
  /** Ids claimed and not yet settled here: a lease that runs out under a slow lane is not sent twice. */
  private readonly inFlight = new Set<string>();
  private readonly rounds = new Set<Promise<DeliveryRound>>();
  private sending = 0;
  private readonly waitingForSlot: (() => void)[] = [];

  constructor(
    @inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository,
    @inject(NOTIFIER) private readonly notifier: Notifier,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Claims up to `limit` due messages (fewer while earlier rounds still hold some) and resolves when each
   * is delivered, to be retried or given up.
   */
  async execute(limit = 50): Promise<DeliveryRound> {
    const running = this.round(limit);
    this.rounds.add(running);
    try {
      return await running;
    } finally {
      this.rounds.delete(running);
    }
  }

  /** Resolves when no round is running, the ones still claiming included (a stopping worker waits). */
  async idle(): Promise<void> {
    while (this.rounds.size > 0) await Promise.allSettled([...this.rounds]);
  }

  private async round(limit: number): Promise<DeliveryRound> {
    const round: RoundResult = { delivered: [], retrying: [], failed: [] };
    const room = limit - this.inFlight.size;
    if (room <= 0) return round;
    const claimed = await this.outbox.claimDue(this.clock.now(), LEASE_MS, room);
    const batches = new Map<string, OutboxMessage[]>();
    for (const message of claimed) {
      if (this.inFlight.has(message.id)) continue;
      this.inFlight.add(message.id);
      const key = destinationOf(message.channel);
      batches.set(key, [...(batches.get(key) ?? []), message]);
    }
    // Every batch settles before the round does (so idle() covers them all); then a failure is told.
    const outcomes = await Promise.allSettled(
      [...batches].map(([key, batch]) =>
        this.queue(key, () => this.send(batch, round)).finally(() => {
          for (const message of batch) this.inFlight.delete(message.id);
        }),
      ),
    );
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
    return round;
  }

  private queue(key: string, work: () => Promise<void>): Promise<void> {
    // A batch that failed (the store was away) rejects its own round, not the batches after it.
    const tail = (this.lanes.get(key) ?? Promise.resolve()).catch(() => undefined).then(work);
    this.lanes.set(key, tail);
    return tail.finally(() => {
      if (this.lanes.get(key) === tail) this.lanes.delete(key);
    });
  }

  /**
   * One destination's batch, in order. After a failure the rest of the batch is not tried: a dead receiver
   * costs one timeout per round instead of one per message, and the rest keep their order behind it.
   */
  private async send(batch: readonly OutboxMessage[], round: RoundResult): Promise<void> {
    let failedBefore: { error: string; retryAt: Date } | undefined;
    for (const message of batch) {
      if (failedBefore !== undefined) {
        const error = `not tried: an earlier message to this destination failed (${failedBefore.error})`;
        await this.settleFailure(message, error.slice(0, 500), failedBefore.retryAt, round);
        continue;
      }
      try {
        await this.withSlot(() => this.notifier.deliver(message));
      } catch (cause) {
        const error = (cause instanceof Error ? cause.message : String(cause)).slice(0, 500);
        failedBefore = {
          error,
          retryAt: new Date(this.clock.now().getTime() + deliveryBackoffMs(message.attempts)),
        };
        await this.settleFailure(message, error, failedBefore.retryAt, round);
        continue;
      }
      await this.outbox.markDelivered(message.id, this.clock.now());
      round.delivered.push(message);
    }
  }

  private async settleFailure(
    message: OutboxMessage,
    error: string,
    retryAt: Date,
    round: RoundResult,
  ): Promise<void> {
    const giveUp = message.attempts >= MAX_DELIVERY_ATTEMPTS;
    await this.outbox.markFailed(message.id, error, giveUp ? undefined : retryAt);
    (giveUp ? round.failed : round.retrying).push({ message, error });
  }

  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.sending >= ALERT_DELIVERY_CONCURRENCY)
      await new Promise<void>((resolve) => this.waitingForSlot.push(resolve));
    else this.sending += 1;
    try {
      return await work();
    } finally {
      const next = this.waitingForSlot.shift();
      if (next === undefined) this.sending -= 1;
      else next();
    }
  }
}
