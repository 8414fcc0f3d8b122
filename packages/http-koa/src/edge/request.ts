import { randomUUID } from 'node:crypto';
import { type Middleware } from 'koa';
import { accessOf } from '../access/access.js';
import { type Logger, type RequestLogLine } from '@hortus/core';
import { allowedOrigins, corsHeaderPairs } from '../exchange/answer.js';

/** What every answer carries whichever way it is built: the request id, the log line, CORS. */

export const CORS_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
const CORS_MAX_AGE_SECONDS = 600;

const requestIdPattern = /^[\w.:-]{1,128}$/u;

/** The caller's X-Request-Id when it is sane, else a new one. */
export function requestIdOf(given: string | undefined): string {
  return given !== undefined && requestIdPattern.test(given) ? given : randomUUID();
}

/**
 * One JSON line per request; the key's id (never its secret) says who made it once keys are in use. No logger:
 * request lines are off (LOG_REQUESTS=off).
 */
export function logRequest(
  logger: Logger | undefined,
  line: {
    readonly requestId: string;
    readonly method: string;
    readonly path: string;
    readonly status: number;
    readonly started: number;
    readonly keyId: string | undefined;
  },
): void {
  if (logger === undefined) return;
  const { requestId, method, path, status, keyId } = line;
  const ms = Math.round((performance.now() - line.started) * 10) / 10;
  const fields: RequestLogLine =
    keyId === undefined
      ? { requestId, method, path, status, ms }
      : { requestId, method, path, status, ms, keyId };
  if (logger.request !== undefined) logger.request(fields);
  else logger.info('request', fields);
}

/** The request log as Koa middleware: the id is set before anything else runs, the line written after. */
export function requestLog(logger: Logger | undefined): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = requestIdOf(ctx.get('X-Request-Id'));
    (ctx.state as { requestId?: string }).requestId = requestId;
    ctx.res.setHeader('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const { method, path, status } = ctx;
      logRequest(logger, { requestId, method, path, status, started, keyId: accessOf(ctx)?.key?.id });
    }
  };
}

/** CORS for an allow-list of origins with credentials; a preflight is answered here and goes no further. */
export function cors(origins: readonly string[]): Middleware {
  const allowed = allowedOrigins(origins);
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin === '') return next();
    ctx.vary('Origin');
    const pairs = corsHeaderPairs(origin, allowed);
    const permitted = pairs.length > 0;
    for (let index = 0; index < pairs.length; index += 2) {
      ctx.res.setHeader(pairs[index] ?? '', pairs[index + 1] ?? '');
    }
    if (ctx.method !== 'OPTIONS' || ctx.get('Access-Control-Request-Method') === '') return next();
    if (permitted) {
      ctx.set('Access-Control-Allow-Methods', CORS_METHODS);
      const requested = ctx.get('Access-Control-Request-Headers');
      ctx.set('Access-Control-Allow-Headers', requested === '' ? 'Content-Type' : requested);
      ctx.set('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
      ctx.vary('Access-Control-Request-Headers');
    }
    ctx.body = null;
    ctx.status = 204;
    return undefined;
  };
}
