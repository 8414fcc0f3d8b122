import {
  type DomainError,
  type ErrorCode,
  isDomainError,
  ThrottledError,
  UnauthenticatedError,
  type Logger,
  StoreDeadlineError,
} from '@hortus/core';
import { type ErrorStyle, json, plainText, type Reply, type RouteErrorPolicy } from '../routes/routing.js';

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
export const defaultErrorStyle: ErrorStyle = { body: 'message', serverError: 'Internal Server Error' };

/** How long a client should wait before retrying while the store is unreachable. */
const RETRY_AFTER_SECONDS = 5;

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

/** An error's answer: the reply and the headers it adds, as name, value, … */
export interface ErrorAnswer {
  readonly reply: Reply;
  readonly headers: readonly string[];
}

/**
 * The answer to an error a route's use case raised (a domain error by its code, with the route's docs/api.md
 * exceptions; anything else the route's 500 text) and its extra headers, logging what deserves it.
 */
export function routeErrorAnswer(
  error: unknown,
  policy: RouteErrorPolicy | undefined,
  logger: Logger,
  request: FailedRequest,
  metrics: { storeDeadlineHit(deadline: string, route: string): void } | undefined,
): ErrorAnswer {
  const style = policy?.style ?? defaultErrorStyle;
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

/** An error raised by Koa or a Koa library (body parser, router) that carries its own HTTP status. */
interface HttpLibraryError {
  readonly status: number;
  readonly message: string;
}

export function isHttpLibraryError(error: unknown): error is HttpLibraryError {
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

/** Where an error is answered: the route's policy (if any), the server's body limit, and where it is logged. */
export interface ErrorContext {
  readonly policy: RouteErrorPolicy | undefined;
  /** The body limit named in a 413 outside a route with its own. */
  readonly bodyLimitBytes: number;
  readonly logger: Logger;
  readonly clientFaults: { warn(message: string, fields: Record<string, unknown>): void };
  readonly metrics: { storeDeadlineHit(deadline: string, route: string): void } | undefined;
  readonly request: FailedRequest;
}

/**
 * The one answer to any error, whichever door the request came through: domain errors by their code (with
 * the route's exceptions in docs/api.md), the edge's and body parsers' 4xx by their status, a broken client
 * stream as 400, anything else as the route's 500 text. Never a stack in a body. `oversized`: a 413, whose
 * door must also drop the rest of the body.
 */
export function errorAnswer(error: unknown, context: ErrorContext): ErrorAnswer & { oversized?: true } {
  const { policy, logger, request, metrics } = context;
  const style = policy?.style ?? defaultErrorStyle;
  if (isDomainError(error)) return routeErrorAnswer(error, policy, logger, request, metrics);
  if (error instanceof EdgeError) {
    if (error.logged !== undefined) context.clientFaults.warn(error.logged, faultFields(request, error));
    return {
      reply: errorBody(style, error.status, error.message),
      headers: error.status === 408 ? ['Connection', 'close'] : [],
    };
  }
  if (isClientStreamError(error)) {
    context.clientFaults.warn('malformed request', faultFields(request, error));
    return { reply: errorBody(style, 400, 'Malformed request'), headers: ['Connection', 'close'] };
  }
  if (isHttpLibraryError(error)) {
    const limit = policy?.bodyLimitBytes ?? context.bodyLimitBytes;
    const reply = errorBody(style, error.status, libraryMessage(error, limit));
    return error.status === 413
      ? { reply, headers: ['Connection', 'close'], oversized: true }
      : { reply, headers: [] };
  }
  return routeErrorAnswer(error, policy, logger, request, metrics);
}

function libraryMessage(error: HttpLibraryError, bodyLimitBytes: number): string {
  if (error.status === 413) return `Request body is larger than ${bodyLimitBytes} bytes`;
  // co-body marks its JSON failures (syntax, a bare scalar, __proto__ keys) as 400 SyntaxErrors.
  if (error.status === 400 && error instanceof SyntaxError) return 'Request body is not valid JSON';
  if (error.status === 400) return 'Bad request';
  if (error.status === 415) return 'Content-Type must be application/json';
  return error.message;
}

/** The fields of a warning about what a client sent. */
export function faultFields(request: FailedRequest, error: unknown): Record<string, unknown> {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    requestId: request.requestId,
    method: request.method,
    path: request.path,
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
