import { randomBytes } from 'node:crypto';
import { InstallationValues, type Logger } from '@hortus/core';
import { SHARED_RATE_LIMIT, type SharedRateLimit } from '@hortus/http-koa';
import { type Container } from 'inversify';
import { type AppConfig } from './config.js';

/** The shared request limit as the application starts and stops it. */
export interface StartedRateLimit extends SharedRateLimit {
  close(): void;
}

/**
 * With RATE_LIMIT_REDIS_URL (and a limit), the request limit counted in Redis for every server of the
 * installation, bound for the HTTP server to use. Its keys carry the installation's id (kept in the store,
 * the same for all its servers), so installations sharing one Redis keep their own counts. Loaded only
 * when configured: a server without it does not load the Redis client.
 */
export async function startSharedRateLimit(
  config: AppConfig,
  container: Container,
  logger: Logger,
): Promise<StartedRateLimit | undefined> {
  const url = config.rateLimitRedisUrl;
  if (url === undefined || config.rateLimitPerMinute === 0) return undefined;
  const { RedisRateLimit } = await import('@hortus/http-koa/shared-rate-limit');
  const installation = await container.get(InstallationValues).valueOf('id', randomBytes(4).toString('hex'));
  const limit = new RedisRateLimit({
    url,
    perMinute: config.rateLimitPerMinute,
    keyPrefix: `hortus:${installation}:requests`,
    logger,
  });
  await limit.start();
  container.bind<SharedRateLimit>(SHARED_RATE_LIMIT).toConstantValue(limit);
  return limit;
}
