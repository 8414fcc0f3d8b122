import { type Logger } from '@hortus/core';
import { type Context, type Middleware } from 'koa';
import { type ClientFaultLog } from '../logger.js';
import { defaultErrorStyle, errorAnswer, errorBody, type FailedRequest } from '../exchange/errors.js';
import { errorPolicyOf, send, setHeaderPairs } from '../koa/send.js';
import { type HttpMetrics, routeOf } from './metrics.js';

function failedRequestOf(ctx: Context): FailedRequest {
  const { requestId } = ctx.state as { requestId?: string };
  return { requestId, method: ctx.method, path: ctx.path, route: routeOf(ctx) };
}

/**
 * The Koa chain's door to the one error answer (exchange/errors.ts): it finds the route's policy in the
 * context, writes the answer, and drops the rest of an oversized body.
 */
export function errorMiddleware(
  logger: Logger,
  bodyLimitBytes: number,
  clientFaults: Pick<ClientFaultLog, 'warn'> = logger,
  metrics?: HttpMetrics,
): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const policy = errorPolicyOf(ctx);
      const request = failedRequestOf(ctx);
      const answer = errorAnswer(error, { policy, bodyLimitBytes, logger, clientFaults, metrics, request });
      if (answer.oversized === true) {
        discardRestOfBody(ctx, (policy?.bodyLimitBytes ?? bodyLimitBytes) * DISCARD_FACTOR);
      }
      setHeaderPairs(ctx, answer.headers);
      send(ctx, answer.reply);
    }
  };
}

/** How much of an oversized body is read and dropped, as a multiple of the limit, before the connection is cut. */
const DISCARD_FACTOR = 8;

/**
 * A client still sending an oversized body would get a reset instead of the 413 if the socket closed under
 * it (most clients write the whole body before they read). So the rest is read and dropped, up to a bound,
 * and the connection closes once the answer is out; past the bound the socket is cut.
 */
function discardRestOfBody(ctx: Context, maxBytes: number): void {
  const request = ctx.req;
  ctx.set('Connection', 'close');
  if (request.complete) return;
  let discarded = 0;
  const drop = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > maxBytes) {
      request.off('data', drop);
      request.socket.destroy();
    }
  };
  request.on('data', drop);
  request.resume();
}

/**
 * Answers every request no route handled, in JSON (never Koa's plain-text "Not Found"): a known path with
 * another method is a 405 naming the allowed ones (OPTIONS lists them), anything else a 404.
 */
export const unmatched: Middleware = (ctx) => {
  const layers = (ctx as unknown as { matched?: readonly { methods: readonly string[] }[] }).matched ?? [];
  const allowed = [...new Set(layers.flatMap((layer) => layer.methods))];
  if (allowed.length === 0) {
    send(ctx, errorBody(defaultErrorStyle, 404, 'Not found'));
  } else if (ctx.method === 'OPTIONS') {
    ctx.set('Allow', [...allowed, 'OPTIONS'].join(', '));
    ctx.body = null;
    ctx.status = 204;
  } else {
    ctx.set('Allow', allowed.join(', '));
    send(ctx, errorBody(defaultErrorStyle, 405, 'Method not allowed'));
  }
};
