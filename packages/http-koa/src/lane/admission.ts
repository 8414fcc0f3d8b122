import { type IncomingMessage } from 'node:http';
import { handOverDecided, type RateLimiter, type SharedRateLimit } from '../edge/rate-limit.js';

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
  const socketAddress = request.socket.remoteAddress ?? '';
  const clientAddress =
    limits.clientAddress === undefined
      ? socketAddress
      : limits.clientAddress(socketAddress, textOf(request.headers['x-forwarded-for']));
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
