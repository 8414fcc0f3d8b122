import { type IncomingMessage, type ServerResponse } from 'node:http';
import { securityHeaders } from '../edge/security.js';
import { type Outgoing } from '../exchange/answer.js';
import { handOverDecided, type RateLimiter, type SharedRateLimit } from '../edge/rate-limit.js';

// What both lanes share: taking a request (the caller's address, its rate-limit token) and writing an answer.

/** What both lanes know of the caller's address and its allowance. */
export interface LaneLimits {
  /** The caller's address behind trusted proxies; the socket's when absent. */
  readonly clientAddress: ((socketAddress: string, forwardedFor: string) => string) | undefined;
  readonly limiter: RateLimiter | undefined;
  /** The shared count (RATE_LIMIT_REDIS_URL), instead of `limiter`. */
  readonly shared: SharedRateLimit | undefined;
}

/** A header as one text (Node already joins repeated ones of most names). */
export function textOf(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** The caller's address: the socket's, or behind trusted proxies the one X-Forwarded-For names. */
export function clientAddressOf(request: IncomingMessage, limits: LaneLimits): string {
  const socketAddress = request.socket.remoteAddress ?? '';
  return limits.clientAddress === undefined
    ? socketAddress
    : limits.clientAddress(socketAddress, textOf(request.headers['x-forwarded-for']));
}

/**
 * Takes the caller's rate-limit token, then `admitted(clientAddress)` answers in the lane; a refusal goes to
 * Koa (`refused`), which answers the 429 itself. A refused local take consumed nothing, so Koa takes again;
 * a shared take has counted either way, so its decision is handed over with the request.
 */
export function admitByRate(
  request: IncomingMessage,
  limits: LaneLimits,
  admitted: (clientAddress: string) => void,
  refused: () => void,
): void {
  const clientAddress = clientAddressOf(request, limits);
  if (limits.limiter !== undefined && !limits.limiter.take(clientAddress).allowed) {
    refused();
    return;
  }
  const { shared } = limits;
  if (shared === undefined) {
    admitted(clientAddress);
    return;
  }
  void shared.take(clientAddress).then((decision) => {
    if (decision.allowed) {
      admitted(clientAddress);
    } else {
      handOverDecided(request, decision);
      refused();
    }
  });
}

const securityHeaderPairs = Object.entries(securityHeaders).flat();
/** The Content-Type Koa writes for the two types a lane answers in. */
const contentTypes: Readonly<Record<string, string>> = {
  'application/json': 'application/json; charset=utf-8',
  'text/plain': 'text/plain; charset=utf-8',
};

/**
 * Writes an exchange's answer on Node's response, with the headers the chain's middleware add to every
 * answer (request id, security headers, then `leading`: CORS, Vary). A lane answers text only (JSON, plain
 * text or nothing); false, writing nothing, for any other body, which the lane must answer as an error.
 */
export function writeOnResponse(
  response: ServerResponse,
  requestId: string,
  leading: readonly string[],
  out: Outgoing,
): boolean {
  const { body } = out;
  if (body !== undefined && typeof body !== 'string') return false;
  const type = out.type === undefined ? undefined : contentTypes[out.type];
  if (out.type !== undefined && type === undefined) return false;
  const headers: string[] = ['X-Request-Id', requestId, ...securityHeaderPairs, ...leading, ...out.headers];
  if (type !== undefined) headers.push('Content-Type', type);
  if (body !== undefined) headers.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(out.status, headers);
  response.end(body);
  return true;
}
