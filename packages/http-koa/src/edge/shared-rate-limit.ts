import { createClient } from '@redis/client';
import { type Logger } from '@hortus/core';
import {
  type IRateLimiterOptions,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { type RateDecision, type SharedRateLimit } from './rate-limit.js';

export interface RedisRateLimitOptions {
  /** RATE_LIMIT_REDIS_URL: redis:// or rediss://, with credentials and a database number if need be. */
  readonly url: string;
  readonly perMinute: number;
  /** Keeps installations sharing one Redis apart; the composition root gives `hortus:<installation id>:requests`. */
  readonly keyPrefix: string;
  readonly logger: Logger;
  /** How long one count may take before this process decides alone. */
  readonly commandTimeoutMs?: number;
}

const ALLOWED: RateDecision = { allowed: true };
const MINUTE_SECONDS = 60;
const DEFAULT_COMMAND_TIMEOUT_MS = 250;

/** The per-process count used while Redis does not answer; it says when it is used, to warn once. */
class Insurance extends RateLimiterMemory {
  constructor(
    options: IRateLimiterOptions,
    private readonly used: () => void,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): Promise<RateLimiterRes> {
    this.used();
    return super.consume(...args);
  }
}

/**
 * The request limit counted in Redis for every server of an installation (rate-limiter-flexible's
 * RateLimiterRedis: one atomic increment per request, a fixed one-minute window per client address).
 * - A client over its allowance is refused from memory until its window ends (`inMemoryBlockOnConsumed`),
 *   without asking Redis again: a flood costs Redis one call per client and minute, not one per request.
 * - When Redis does not answer (not connected, or a count slower than `commandTimeoutMs`), the library's
 *   insurance limiter counts in this process instead: requests are still answered, limited per server
 *   as without Redis. A warning is logged once per outage, and a line when Redis is back.
 * - Commands are never queued while disconnected (`disableOfflineQueue`): a request must not wait for a
 *   reconnection.
 */
export class RedisRateLimit implements SharedRateLimit {
  private readonly client;
  private readonly limiter: RateLimiterRedis;
  private readonly logger: Logger;
  private readonly where: string;
  /** Whether the insurance counts since Redis last became ready (the warning is written once). */
  private degraded = false;

  constructor(options: RedisRateLimitOptions) {
    this.logger = options.logger;
    this.where = hostOf(options.url);
    const timeout = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.client = createClient({
      url: options.url,
      disableOfflineQueue: true,
      commandOptions: { timeout },
      socket: {
        connectTimeout: 2000,
        // Retries forever, at most every 5 s: the limit is shared again as soon as Redis is back.
        reconnectStrategy: (retries: number) => Math.min(5000, 100 * 2 ** Math.min(retries, 6)),
      },
    });
    // Without a listener an error event would end the process; each one is an outage already reported.
    this.client.on('error', (error: unknown) => this.unavailable(error));
    this.client.on('ready', () => this.available());
    const window = { points: options.perMinute, duration: MINUTE_SECONDS };
    this.limiter = new RateLimiterRedis({
      ...window,
      storeClient: this.client,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      keyPrefix: options.keyPrefix,
      inMemoryBlockOnConsumed: options.perMinute,
      insuranceLimiter: new Insurance(window, () => this.unavailable(undefined)),
    });
  }

  /**
   * Connects, waiting at most `waitMs` (the server's start must not hang on Redis): if Redis has not
   * answered by then, the warning is logged, requests are limited per process and the client keeps
   * reconnecting in the background.
   */
  async start(waitMs = 2000): Promise<void> {
    const connected = this.client.connect().then(
      () => true,
      () => false,
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
    });
    const ready = await Promise.race([connected, waited]);
    clearTimeout(timer);
    if (!ready) this.unavailable(new Error(`no answer within ${waitMs} ms`));
  }

  async take(client: string): Promise<RateDecision> {
    try {
      await this.limiter.consume(client);
      return ALLOWED;
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
      }
      // The insurance itself failed (it does not, being memory): a request is not refused for it.
      this.unavailable(error);
      return ALLOWED;
    }
  }

  /** Stops reconnecting; counts made after this are the insurance's. */
  close(): void {
    if (this.client.isOpen) this.client.destroy();
  }

  private unavailable(error: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn('rate limit redis unavailable, limiting per process', {
      redis: this.where,
      ...(error === undefined ? {} : { error: error instanceof Error ? error.message : String(error) }),
    });
  }

  private available(): void {
    if (this.degraded)
      this.logger.info('rate limit redis available, limit shared again', { redis: this.where });
    this.degraded = false;
  }
}

/** Where Redis is, for the log, without credentials. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '<invalid url>';
  }
}
