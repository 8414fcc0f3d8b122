import { createClient } from '@redis/client';
import { type Logger } from '@hortus/core';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { type SharedRateLimitHealth } from './metrics.js';
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
/** At most this many commands wait in the client: beyond, a count is refused at once and made in memory. */
const MAX_QUEUED_COMMANDS = 1000;
/** A count whose deadline passed before Redis answered. */
const LATE = Symbol('late');

type Outcome = RateDecision | { readonly failed: unknown };

/**
 * The request limit counted in Redis for every server of an installation (rate-limiter-flexible's
 * RateLimiterRedis: one atomic increment per request, a fixed one-minute window per client address).
 * - A client over its allowance is refused from memory until its window ends (`inMemoryBlockOnConsumed`),
 *   without asking Redis again: a flood costs Redis one call per client and minute, not one per request.
 * - Every count has Hortus's own deadline (`commandTimeoutMs`): node-redis's command timeout covers only the
 *   wait to be written, never the wait for the answer, so a Redis that is connected but silent (stopped,
 *   swapping, a network that drops packets) would hold every request. When Redis is not connected, fails, or
 *   misses the deadline, this process counts in its own memory instead: requests are still answered, limited
 *   per server as without Redis. A warning is logged once per outage, and a line when Redis answers again.
 * - While a count is overdue, no other count is sent: one command stays out to learn when Redis is back (its
 *   late answer is dropped), so nothing piles up in the client or in Redis during a stall. Commands are never
 *   queued while disconnected (`disableOfflineQueue`): a request must not wait for a reconnection.
 */
export class RedisRateLimit implements SharedRateLimit {
  private readonly client;
  private readonly limiter: RateLimiterRedis;
  private readonly memory: RateLimiterMemory;
  private readonly logger: Logger;
  private readonly where: string;
  private readonly timeoutMs: number;
  /** Whether this process counts alone since Redis last answered (the warning is written once). */
  private degraded = false;
  /** Counts sent to Redis and not answered yet. */
  private inFlight = 0;
  /** Whether a count missed its deadline and Redis has not answered since. */
  private overdue = false;
  private readonly fallbacks = { deadline: 0, unavailable: 0 };

  constructor(options: RedisRateLimitOptions) {
    this.logger = options.logger;
    this.where = hostOf(options.url);
    this.timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.client = createClient({
      url: options.url,
      disableOfflineQueue: true,
      commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
      // Bounds only the wait to be written (see the class comment); the deadline in take() bounds the rest.
      commandOptions: { timeout: this.timeoutMs },
      socket: {
        connectTimeout: 2000,
        // Retries forever, at most every 5 s: the limit is shared again as soon as Redis is back.
        reconnectStrategy: (retries: number) => Math.min(5000, 100 * 2 ** Math.min(retries, 6)),
      },
    });
    // Without a listener an error event would end the process; each one is an outage already reported.
    this.client.on('error', (error: unknown) => this.unavailable(error));
    // Connected is not answering (a stopped Redis still accepts connections): a ping must come back first.
    this.client.on('ready', () => this.checkAnswers());
    const window = { points: options.perMinute, duration: MINUTE_SECONDS };
    this.memory = new RateLimiterMemory(window);
    this.limiter = new RateLimiterRedis({
      ...window,
      storeClient: this.client,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      keyPrefix: options.keyPrefix,
      inMemoryBlockOnConsumed: options.perMinute,
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
    // Redis is silent and already has a count to answer: asking again would only queue behind it.
    if (this.overdue && this.inFlight > 0) return this.alone(client, 'deadline');
    const outcome = await this.withDeadline(this.counted(client));
    if (outcome === LATE) {
      this.overdue = true;
      this.unavailable(new Error(`a count took longer than ${this.timeoutMs} ms`));
      return this.alone(client, 'deadline');
    }
    if ('failed' in outcome) {
      this.unavailable(outcome.failed);
      return this.alone(client, 'unavailable');
    }
    return outcome;
  }

  /** What this process has done alone, for /metrics. */
  health(): SharedRateLimitHealth {
    return { degraded: this.degraded, fallbacks: { ...this.fallbacks } };
  }

  /** Stops reconnecting; counts made after this are this process's own. */
  close(): void {
    if (this.client.isOpen) this.client.destroy();
  }

  /** One count in Redis; an answer, even a late one, says Redis is back. */
  private counted(client: string): Promise<Outcome> {
    this.inFlight += 1;
    return this.limiter.consume(client).then(
      (): Outcome => {
        this.inFlight -= 1;
        this.answered();
        return ALLOWED;
      },
      (error: unknown): Outcome => {
        this.inFlight -= 1;
        if (!(error instanceof RateLimiterRes)) return { failed: error };
        // A refusal of the in-memory block (inMemoryBlockOnConsumed) consumed nothing and did not ask Redis.
        if (error.consumedPoints > 0) this.answered();
        return refusal(error);
      },
    );
  }

  /** The outcome, or LATE when the deadline passes first; a late outcome is dropped. */
  private withDeadline(outcome: Promise<Outcome>): Promise<Outcome | typeof LATE> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<typeof LATE>((resolve) => {
      timer = setTimeout(() => resolve(LATE), this.timeoutMs);
    });
    return Promise.race([outcome, late]).finally(() => clearTimeout(timer));
  }

  private alone(client: string, reason: keyof typeof this.fallbacks): Promise<RateDecision> {
    this.fallbacks[reason] += 1;
    return this.memory.consume(client).then(
      () => ALLOWED,
      // Memory does not fail; if it did, a request would not be refused for it.
      (error: unknown) => (error instanceof RateLimiterRes ? refusal(error) : ALLOWED),
    );
  }

  private answered(): void {
    this.overdue = false;
    this.available();
  }

  /** After a (re)connection: shared again once Redis answers a ping within the deadline. */
  private checkAnswers(): void {
    if (!this.degraded) return;
    void this.withDeadline(
      this.client.ping().then(
        (): Outcome => ALLOWED,
        (error: unknown): Outcome => ({ failed: error }),
      ),
    ).then((outcome) => {
      if (outcome === ALLOWED) this.available();
    });
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

function refusal(result: RateLimiterRes): RateDecision {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)) };
}

/** Where Redis is, for the log, without credentials. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '<invalid url>';
  }
}
