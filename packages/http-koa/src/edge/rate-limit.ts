import { type Middleware } from 'koa';
import { json, send } from '../routes/routing.js';

export type RateDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

const ALLOWED: RateDecision = { allowed: true };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** How many client buckets are kept at most; the least recently seen client is forgotten first. */
export const MAX_RATE_LIMIT_CLIENTS = 10_000;

/**
 * A token bucket per client: it holds up to a minute's allowance and refills continuously, so a client
 * may burst and then keeps to its rate. Memory is bounded: buckets sit in least-recently-used order, a
 * bucket idle long enough to be full again is the same as none and is dropped, and beyond `maxClients`
 * the oldest is dropped.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** The client taken last: already the map's newest entry, so it need not be moved there again. */
  private newest: string | undefined;
  private readonly refillPerMs: number;
  private readonly fullAfterMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = () => performance.now(),
    private readonly maxClients = MAX_RATE_LIMIT_CLIENTS,
  ) {
    this.refillPerMs = perMinute / 60_000;
    this.fullAfterMs = 60_000;
  }

  get clients(): number {
    return this.buckets.size;
  }

  take(client: string): RateDecision {
    const now = this.now();
    this.forgetIdle(now);
    let bucket = this.buckets.get(client);
    if (bucket === undefined) {
      bucket = { tokens: this.perMinute, updatedMs: now };
      this.buckets.set(client, bucket);
      if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value ?? '');
    } else {
      bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedMs) * this.refillPerMs);
      bucket.updatedMs = now;
      // Re-inserting keeps the map in least-recently-used order.
      if (client !== this.newest) {
        this.buckets.delete(client);
        this.buckets.set(client, bucket);
      }
    }
    this.newest = client;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    if (allowed) return ALLOWED;
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillPerMs / 1000)),
    };
  }

  /** Drops a few of the least recently seen buckets that have refilled completely. */
  private forgetIdle(now: number): void {
    for (let checked = 0; checked < 2; checked += 1) {
      const oldest = this.buckets.entries().next().value;
      if (oldest === undefined || now - oldest[1].updatedMs < this.fullAfterMs) return;
      this.buckets.delete(oldest[0]);
    }
  }
}

/**
 * 429 JSON `{message}` with Retry-After once a client (by IP address) has used up its allowance. The poll
 * lane takes its token from the same limiter and answers what it takes, so no request is counted twice.
 */
export function rateLimitMiddleware(limiter: RateLimiter): Middleware {
  return (ctx, next) => {
    const decision = limiter.take(ctx.ip);
    if (decision.allowed) return next();
    ctx.set('Retry-After', String(decision.retryAfterSeconds));
    send(ctx, json({ message: `Too many requests, try again in ${decision.retryAfterSeconds} s` }, 429));
    return Promise.resolve();
  };
}
