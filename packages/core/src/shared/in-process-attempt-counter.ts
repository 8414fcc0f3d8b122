import { inject, injectable } from 'inversify';
import {
  type AttemptCounter,
  type AttemptDecision,
  type AttemptLimit,
  retryAfterSeconds,
} from './attempt-counter.port.js';
import { CLOCK, type Clock } from './clock.port.js';

/** Bounds the memory a scan of many addresses or e-mails can take; the oldest windows go first. */
export const MAX_COUNTED_KEYS = 50_000;

interface Window {
  points: number;
  readonly endsAt: number;
}

/**
 * The attempt counter of one process, on the core clock (tests move time): the default of the embedded
 * stores. Several servers each count on their own with it, so N servers allow N times a limit; a store
 * that several servers share binds its own counter (adapter-mongo).
 */
@injectable()
export class InProcessAttemptCounter implements AttemptCounter {
  private readonly windows = new Map<string, Window>();

  constructor(@inject(CLOCK) private readonly clock: Clock) {}

  consume(limit: AttemptLimit, key: string): Promise<AttemptDecision> {
    const now = this.clock.now().getTime();
    const name = `${limit.name}:${key}`;
    let window = this.windows.get(name);
    if (window === undefined || window.endsAt <= now) {
      this.windows.delete(name);
      if (this.windows.size >= MAX_COUNTED_KEYS) this.windows.delete(this.windows.keys().next().value ?? '');
      window = { points: 0, endsAt: now + limit.windowMs };
      this.windows.set(name, window);
    }
    window.points += 1;
    if (window.points <= limit.points) {
      return Promise.resolve({ allowed: true, remaining: limit.points - window.points });
    }
    return Promise.resolve({ allowed: false, retryAfterSeconds: retryAfterSeconds(window.endsAt - now) });
  }

  reward(limit: AttemptLimit, key: string): Promise<void> {
    const window = this.windows.get(`${limit.name}:${key}`);
    if (window !== undefined && window.points > 0) window.points -= 1;
    return Promise.resolve();
  }

  forget(limit: AttemptLimit, key: string): Promise<void> {
    this.windows.delete(`${limit.name}:${key}`);
    return Promise.resolve();
  }
}
