import {
  type DomainError,
  type ErrorCode,
  isDomainError,
  ThrottledError,
  UnauthenticatedError,
  type Logger,
  StoreDeadlineError,
} from '@hortus/core';
import { type Context, type Middleware } from 'koa';
import { type ClientFaultLog } from '../logger.js';
import { type HttpMetrics, routeOf } from './metrics.js';
import {
  type ErrorStyle,
  errorPolicyOf,
  json,
  plainText,
  type Reply,
  type RouteErrorPolicy,
  send,
} from '../routes/routing.js';

export const statusOfCode: Readonly<Record<ErrorCode, number>> = {
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_INPUT: 400,
  UNAVAILABLE: 503,
  UPSTREAM_FAILED: 500,
  // The request is well-formed but conflicts with what the group already holds (its quota).
  QUOTA_EXCEEDED: 409,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  THROTTLED: 429,
};

/** Outside any route (unknown path, wrong method, preflight) errors are JSON `{message}`. */
const defaultStyle: ErrorStyle = { body: 'message', serverError: 'Internal Server Error' };

/** What an error tells the client beside its body, as name, value, …: when to retry, how to authenticate. */
function errorHeaders(error: DomainError): string[] {
  const headers: string[] = [];
  if (error.code === 'UNAVAILABLE') headers.push('Retry-After', String(RETRY_AFTER_SECONDS));
  if (error instanceof ThrottledError) headers.push('Retry-After', String(error.retryAfterSeconds));
  if (error instanceof UnauthenticatedError) {
    headers.push(
      'WWW-Authenticate',
      error.invalidCredential ? 'Bearer realm="hortus", error="invalid_token"' : 'Bearer realm="hortus"',
    );
  }
  return headers;
}

/** The request an error is logged for. */
export interface FailedRequest {
  readonly requestId: string | undefined;
  readonly method: string;
  readonly path: string;
  /** The route pattern, as the metrics name it. */
  readonly route: string;
}

/**
 * The answer to an error a route's use case raised (a domain error by its code, with the route's docs/api.md
 * exceptions; anything else the route's 500 text) and its extra headers, logging what deserves it. The Koa
 * chain and the poll lane both answer route errors with this.
 */
export function routeErrorAnswer(
  error: unknown,
  policy: RouteErrorPolicy | undefined,
  logger: Logger,
  request: FailedRequest,
  metrics: Pick<HttpMetrics, 'storeDeadlineHit'> | undefined,
): { readonly reply: Reply; readonly headers: readonly string[] } {
  const style = policy?.style ?? defaultStyle;
  if (error instanceof StoreDeadlineError) metrics?.storeDeadlineHit(error.deadline, request.route);
  if (!isDomainError(error)) {
    logFailure(logger, request, error, 'error');
    return { reply: errorBody(style, 500, style.serverError), headers: [] };
  }
  const status = policy?.statusFor[error.code] ?? statusOfCode[error.code];
  // Domain 5xx are a store outage or a failing code host: expected weather, so a warning with its cause.
  if (status >= 500) logFailure(logger, request, error, 'warn');
  // An outage is JSON `{message}` on every route, so clients can tell "retry later" from a bug.
  const reply =
    error.code === 'UNAVAILABLE'
      ? json({ message: error.message }, status)
      : errorBody(style, status, status >= 500 ? style.serverError : error.message);
  return { reply, headers: errorHeaders(error) };
}

function answerRouteError(
  ctx: Context,
  answer: { readonly reply: Reply; readonly headers: readonly string[] },
): void {
  const { headers } = answer;
  for (let index = 0; index < headers.length; index += 2)
    ctx.set(headers[index] ?? '', headers[index + 1] ?? '');
  send(ctx, answer.reply);
}

function failedRequestOf(ctx: Context): FailedRequest {
  const { requestId } = ctx.state as { requestId?: string };
  return { requestId, method: ctx.method, path: ctx.path, route: routeOf(ctx) };
}

/** How long a client should wait before retrying while the store is unreachable. */
const RETRY_AFTER_SECONDS = 5;

/** An error raised by Koa or a Koa library (body parser, router) that carries its own HTTP status. */
interface HttpLibraryError {
  readonly status: number;
  readonly message: string;
}

function isHttpLibraryError(error: unknown): error is HttpLibraryError {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** A 4xx raised at the edge (body reading, encodings): its message is written for the client and kept. */
export class EdgeError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly logged?: string,
  ) {
    super(message);
    this.name = 'EdgeError';
  }
}

const clientStreamErrorCodes = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/** A failure of the client's connection or framing (cut off, broken chunking), not of the server. */
export function isClientStreamError(error: unknown): boolean {
  // raw-body's name for a request stream that failed (bad framing) before it began reading it.
  if ((error as { type?: unknown } | null)?.type === 'stream.not.readable') return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return clientStreamErrorCodes.has(code) || code.startsWith('HPE_');
}

export function errorBody(style: ErrorStyle, status: number, message: string): Reply {
  if (style.body === 'text') return plainText(message, status);
  return json(style.body === 'error' ? { error: message } : { message }, status);
}

/**
 * The one place errors become responses: domain errors by their code (with the route's exceptions in docs/api.md),
 * library errors by their status, anything else as the route's 500 text. Never a stack in a body.
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
      const style = policy?.style ?? defaultStyle;
      if (isDomainError(error)) {
        answerRouteError(ctx, routeErrorAnswer(error, policy, logger, failedRequestOf(ctx), metrics));
      } else if (error instanceof EdgeError) {
        if (error.logged !== undefined) clientFaults.warn(error.logged, faultFields(ctx, error));
        if (error.status === 408) ctx.set('Connection', 'close');
        send(ctx, errorBody(style, error.status, error.message));
      } else if (isClientStreamError(error)) {
        clientFaults.warn('malformed request', faultFields(ctx, error));
        ctx.set('Connection', 'close');
        send(ctx, errorBody(style, 400, 'Malformed request'));
      } else if (isHttpLibraryError(error)) {
        const limit = policy?.bodyLimitBytes ?? bodyLimitBytes;
        if (error.status === 413) discardRestOfBody(ctx, limit * DISCARD_FACTOR);
        send(ctx, errorBody(style, error.status, libraryMessage(error, limit)));
      } else {
        answerRouteError(ctx, routeErrorAnswer(error, policy, logger, failedRequestOf(ctx), metrics));
      }
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

function libraryMessage(error: HttpLibraryError, bodyLimitBytes: number): string {
  if (error.status === 413) return `Request body is larger than ${bodyLimitBytes} bytes`;
  // co-body marks its JSON failures (syntax, a bare scalar, __proto__ keys) as 400 SyntaxErrors.
  if (error.status === 400 && error instanceof SyntaxError) return 'Request body is not valid JSON';
  if (error.status === 400) return 'Bad request';
  if (error.status === 415) return 'Content-Type must be application/json';
  return error.message;
}

function faultFields(ctx: Context, error: unknown): Record<string, unknown> {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    requestId: (ctx.state as { requestId?: string }).requestId,
    method: ctx.method,
    path: ctx.path,
    error: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

function logFailure(logger: Logger, request: FailedRequest, error: unknown, level: 'warn' | 'error'): void {
  const cause = error instanceof Error ? error : new Error(String(error));
  const causeOfCause = cause.cause instanceof Error ? cause.cause.message : undefined;
  logger[level]('request failed', {
    requestId: request.requestId,
    method: request.method,
    path: request.path,
    error: cause.message,
    ...(causeOfCause === undefined ? {} : { cause: causeOfCause }),
    stack: cause.stack,
  });
}

/**
 * Answers every request no route handled, in JSON (never Koa's plain-text "Not Found"): a known path with
 * another method is a 405 naming the allowed ones (OPTIONS lists them), anything else a 404.
 */
export const unmatched: Middleware = (ctx) => {
  const layers = (ctx as unknown as { matched?: readonly { methods: readonly string[] }[] }).matched ?? [];
  const allowed = [...new Set(layers.flatMap((layer) => layer.methods))];
  if (allowed.length === 0) {
    send(ctx, errorBody(defaultStyle, 404, 'Not found'));
  } else if (ctx.method === 'OPTIONS') {
    ctx.set('Allow', [...allowed, 'OPTIONS'].join(', '));
    ctx.body = null;
    ctx.status = 204;
  } else {
    ctx.set('Allow', allowed.join(', '));
    send(ctx, errorBody(defaultStyle, 405, 'Method not allowed'));
  }
};
