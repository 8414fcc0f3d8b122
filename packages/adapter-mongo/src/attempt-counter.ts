import { createHash } from 'node:crypto';
import { inject, injectable } from 'inversify';
import { RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import {
  type AttemptCounter,
  type AttemptDecision,
  type AttemptLimit,
  retryAfterSeconds,
  StoreUnavailableError,
} from '@hortus/core';
import { type MongoDatabase } from './database.js';
import { type CollectionSpec, isUnavailableError, MONGO_DATABASE, withDeadline } from './support.js';

/**
 * One document per counted key (`<limit>:<sha256 of the key>`, points, expire), written by rate-limiter-flexible. The
 * indexes are ours (its own creation is off): the key is unique, so servers racing on a new key meet in
 * one document. No TTL index: FerretDB v1 has none ("expireAfterSeconds is not implemented"), so the
 * counter removes expired windows itself (PRUNE_EVERY_MS); on MongoDB a TTL index would do the same.
 */
export const attemptCollection: CollectionSpec = {
  name: 'attempts',
  indexes: [
    { key: { key: 1 }, name: 'key_unique', unique: true },
    { key: { expire: 1 }, name: 'expire' },
  ],
};

/** How often, at most, one server removes the windows that have ended (a scan of many addresses). */
export const PRUNE_EVERY_MS = 60_000;

/**
 * The attempt counter in the store's own database: every server on one MongoDB counts into the same
 * documents, so a limit holds for all of them together (the in-process counter allows N servers N times
 * the limit). The counting itself (an atomic upsert with $inc per attempt, window by `expire`) is
 * rate-limiter-flexible's RateLimiterMongo; one limiter per limit, made on its first use.
 */
@injectable()
export class MongoAttemptCounter implements AttemptCounter {
  private readonly limiters = new Map<string, RateLimiterMongo>();
  private prunedAt = 0;

  constructor(@inject(MONGO_DATABASE) private readonly database: MongoDatabase) {}

  async consume(limit: AttemptLimit, key: string): Promise<AttemptDecision> {
    this.pruneNowAndThen();
    try {
      const counted = await withDeadline(
        this.limiter(limit).consume(stored(key)),
        this.database.operationDeadlineMs,
      );
      return { allowed: true, remaining: counted.remainingPoints };
    } catch (error) {
      // The library refuses with its result (not an Error) when the points are used up.
      if (error instanceof RateLimiterRes) {
        return { allowed: false, retryAfterSeconds: retryAfterSeconds(error.msBeforeNext) };
      }
      throw storeError(error);
    }
  }

  async reward(limit: AttemptLimit, key: string): Promise<void> {
    await this.run(this.limiter(limit).reward(stored(key)));
  }

  async forget(limit: AttemptLimit, key: string): Promise<void> {
    await this.run(this.limiter(limit).delete(stored(key)));
  }

  /** Removes ended windows in the background; a failure only means it is tried again later. */
  private pruneNowAndThen(): void {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const ended = this.database
      .collection(attemptCollection.name)
      .deleteMany({ expire: { $lte: new Date(now) } });
    withDeadline(ended, this.database.operationDeadlineMs).catch(() => undefined);
  }

  private async run<T>(operation: Promise<T>): Promise<T> {
    try {
      return await withDeadline(operation, this.database.operationDeadlineMs);
    } catch (error) {
      throw storeError(error);
    }
  }

  private limiter(limit: AttemptLimit): RateLimiterMongo {
    const id = `${limit.name}/${limit.points}/${limit.windowMs}`;
    let limiter = this.limiters.get(id);
    if (limiter === undefined) {
      limiter = new RateLimiterMongo({
        // A Db (it has no `db()`): the library then uses it as the database itself.
        storeClient: this.database.db,
        tableName: attemptCollection.name,
        keyPrefix: limit.name,
        points: limit.points,
        duration: limit.windowMs / 1000,
        disableIndexesCreation: true,
      });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }
}

/** The key as stored: a digest, so the database keeps no e-mail or client address in the clear. */
function stored(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

function storeError(error: unknown): unknown {
  return isUnavailableError(error) ? new StoreUnavailableError(undefined, { cause: error }) : error;
}
