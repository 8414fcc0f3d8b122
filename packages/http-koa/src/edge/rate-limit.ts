import { type IncomingMessage } from 'node:http';
import { type Context, type Middleware } from 'koa';
import { json } from '../routes/routing.js';
import { send } from '../koa/send.js';
import { type SharedRateLimitHealth } from './metrics.js';

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
 * Requests counted outside the process (RATE_LIMIT_REDIS_URL): every server of an installation takes from
 * one allowance per client, so the answer comes later. It never rejects: when the count cannot be had, the
 * implementation decides by itself (see edge/shared-rate-limit.ts).
 */
export interface SharedRateLimit {
  take(client: string): Promise<RateDecision>;
  /** Whether and how often it decided alone, read at each scrape of /metrics. */
  health?(): SharedRateLimitHealth;
}

/**
 * What a lane already decided for a request it hands to Koa: a shared take costs a count in the shared
 * backend, refused or not, so Koa answers the lane's decision instead of taking a second time.
 */
const decided = new WeakMap<IncomingMessage, RateDecision>();

/** Hands a request to Koa with its shared decision (see `decided`). */
export function handOverDecided(request: IncomingMessage, decision: RateDecision): void {
  decided.set(request, decision);
}

function refuse(ctx: Context, decision: Exclude<RateDecision, { allowed: true }>): void {
  ctx.set('Retry-After', String(decision.retryAfterSeconds));
  send(ctx, json({ message: `Too many requests, try again in ${decision.retryAfterSeconds} s` }, 429));
}

/**
 * 429 JSON `{message}` with Retry-After once a client (by IP address) has used up its allowance. The poll
 * lane takes its token from the same limiter and answers what it takes, so no request is counted twice.
 */
export function rateLimitMiddleware(limiter: RateLimiter): Middleware {
  return (ctx, next) => {
    const decision = limiter.take(ctx.ip);
    if (decision.allowed) return next();
    refuse(ctx, decision);
    return Promise.resolve();
  };
}

/** The same with the shared count: a request a lane took for and handed over is not counted again. */
export function sharedRateLimitMiddleware(limit: SharedRateLimit): Middleware {
  return async (ctx, next) => {
    const decision = decided.get(ctx.req) ?? (await limit.take(ctx.ip));
    if (decision.allowed) return next();
    refuse(ctx, decision);
  };
}
