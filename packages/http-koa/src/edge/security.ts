import { type IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { type Middleware } from 'koa';
import { type TrustProxy } from '../config.js';
import { normalisedPath, type PolicyTable } from '../routes/policy.js';
import { json, send } from '../routes/routing.js';

/**
 * Headers every answer carries. The API answers JSON and text only, so the content policy forbids every
 * source; the docs page sets its own, wider policy (routing's `send`).
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

const securityHeaderEntries = Object.entries(securityHeaders);

/** Straight onto the response (Koa's ctx.set builds arrays per call): these run on every request. */
export const securityHeadersMiddleware: Middleware = (ctx, next) => {
  const { res } = ctx;
  for (const [name, value] of securityHeaderEntries) res.setHeader(name, value);
  res.removeHeader('X-Powered-By');
  return next();
};

export type RateDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

const ALLOWED: RateDecision = { allowed: true };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** How many client buckets are kept at most; the least recently seen client is forgotten first. */
export const MAX_RATE_LIMIT_CLIENTS = 10_000;

/**
 * A token bucket per client: it holds up to a minute's allowance and refills continuously, so a client
 * may burst and then keeps to its rate. Memory is bounded: buckets sit in least-recently-used order, a
 * bucket idle long enough to be full again is the same as none and is dropped, and beyond `maxClients`
 * the oldest is dropped.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** The client taken last: already the map's newest entry, so it need not be moved there again. */
  private newest: string | undefined;
  private readonly refillPerMs: number;
  private readonly fullAfterMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = () => performance.now(),
    private readonly maxClients = MAX_RATE_LIMIT_CLIENTS,
  ) {
    this.refillPerMs = perMinute / 60_000;
    this.fullAfterMs = 60_000;
  }

  get clients(): number {
    return this.buckets.size;
  }

  take(client: string): RateDecision {
    const now = this.now();
    this.forgetIdle(now);
    let bucket = this.buckets.get(client);
    if (bucket === undefined) {
      bucket = { tokens: this.perMinute, updatedMs: now };
      this.buckets.set(client, bucket);
      if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value ?? '');
    } else {
      bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedMs) * this.refillPerMs);
      bucket.updatedMs = now;
      // Re-inserting keeps the map in least-recently-used order.
      if (client !== this.newest) {
        this.buckets.delete(client);
        this.buckets.set(client, bucket);
      }
    }
    this.newest = client;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    if (allowed) return ALLOWED;
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillPerMs / 1000)),
    };
  }

  /** Drops a few of the least recently seen buckets that have refilled completely. */
  private forgetIdle(now: number): void {
    for (let checked = 0; checked < 2; checked += 1) {
      const oldest = this.buckets.entries().next().value;
      if (oldest === undefined || now - oldest[1].updatedMs < this.fullAfterMs) return;
      this.buckets.delete(oldest[0]);
    }
  }
}

/**
 * 429 JSON `{message}` with Retry-After once a client (by IP address) has used up its allowance. Requests in
 * `counted` have had their token taken already (the poll lane handed them on).
 */
export function rateLimitMiddleware(limiter: RateLimiter, counted?: WeakSet<IncomingMessage>): Middleware {
  return (ctx, next) => {
    if (counted?.has(ctx.req) === true) return next();
    const decision = limiter.take(ctx.ip);
    if (decision.allowed) return next();
    ctx.set('Retry-After', String(decision.retryAfterSeconds));
    send(ctx, json({ message: `Too many requests, try again in ${decision.retryAfterSeconds} s` }, 429));
    return Promise.resolve();
  };
}

/** An address as written in X-Forwarded-For or seen on the socket, without port, brackets or v4-in-v6 prefix. */
export function normaliseAddress(text: string): string {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/u.exec(address);
  if (bracketed?.[1] !== undefined) address = bracketed[1];
  else if (/^[\d.]+:\d+$/u.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  if (/^::ffff:[\d.]+$/iu.test(address)) address = address.slice(7);
  return address.toLowerCase();
}

/**
 * Finds the client's address from the socket and X-Forwarded-For under TrustProxy (config.ts): the entry
 * the nearest trusted proxy saw, never one the client could have written itself.
 */
export function clientAddressOf(trust: TrustProxy): (socketAddress: string, forwardedFor: string) => string {
  const chainOf = (socketAddress: string, forwardedFor: string): string[] => [
    ...forwardedFor
      .split(',')
      .map(normaliseAddress)
      .filter((entry) => entry !== ''),
    normaliseAddress(socketAddress),
  ];
  if ('hops' in trust) {
    const { hops } = trust;
    return (socketAddress, forwardedFor) => {
      if (hops === 0 || forwardedFor === '') return normaliseAddress(socketAddress);
      const chain = chainOf(socketAddress, forwardedFor);
      return chain[Math.max(0, chain.length - 1 - hops)] ?? '';
    };
  }
  const trusted = new BlockList();
  for (const entry of trust.proxies) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) trusted.addAddress(normaliseAddress(address), family);
    else trusted.addSubnet(normaliseAddress(address), Number(bits), family);
  }
  const isTrusted = (address: string): boolean => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
  return (socketAddress, forwardedFor) => {
    const chain = chainOf(socketAddress, forwardedFor);
    for (let index = chain.length - 1; index >= 0; index -= 1) {
      const address = chain[index] ?? '';
      if (!isTrusted(address)) return address;
    }
    return chain[0] ?? '';
  };
}

/** Sets ctx.ip (which the rate limit keys on) to the address TRUST_PROXY makes the client's. */
export function clientAddressMiddleware(trust: TrustProxy): Middleware {
  const clientAddress = clientAddressOf(trust);
  return (ctx, next) => {
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For'));
    return next();
  };
}

/**
 * HEAD on a GET that changes data would perform the change and hide the answer: 405, doing nothing.
 * Browsers, link checkers and caches send HEAD freely and expect it to be safe.
 */
export function writingHeadMiddleware(policies: PolicyTable): Middleware {
  return (ctx, next) => {
    if (ctx.method !== 'HEAD' || !policies.writes('GET', ctx.path)) return next();
    ctx.set('Allow', 'GET');
    send(ctx, json({ message: 'HEAD is not allowed here: this GET changes data' }, 405));
    return Promise.resolve();
  };
}

const crossSiteHeader = 'cross-site';

/**
 * Fetch Metadata: a browser marks a request a web page made to another site `Sec-Fetch-Site: cross-site`.
 * A state-changing request so marked is refused (403) unless its Origin is one CORS allows: an <img> or a
 * link on any page could otherwise switch devices (with access keys off there is nothing else to stop it).
 * Same-site pages (another port of the same host), the allowed origins and clients that are not browsers
 * (no such header) pass.
 */
export function fetchMetadataMiddleware(corsOrigins: readonly string[], policies: PolicyTable): Middleware {
  const allowed = new Set(corsOrigins.map((origin) => origin.toLowerCase()));
  return (ctx, next) => {
    if (ctx.get('Sec-Fetch-Site').toLowerCase() !== crossSiteHeader) return next();
    if (!policies.writes(ctx.method, ctx.path)) return next();
    if (allowed.has(ctx.get('Origin').toLowerCase())) return next();
    send(
      ctx,
      json(
        { message: 'Cross-site requests that change data are refused unless their origin is allowed' },
        403,
      ),
    );
    return Promise.resolve();
  };
}

/** Paths answered whatever the Host: they say only whether the server runs, and orchestrators probe them. */
const anyHostPaths = new Set(['/healthz', '/readyz']);

/** The host name of a Host header value, lower case, without port or IPv6 brackets. */
export function hostNameOf(host: string): string {
  const trimmed = host.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\]/u.exec(trimmed);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  return trimmed.replace(/:\d*$/u, '').replace(/\.$/u, '');
}

/** Whether a Host header names an allowed host (see HttpSettings.allowedHosts). */
export function hostAllowed(allowedHosts: readonly string[]): (host: string) => boolean {
  if (allowedHosts.includes('*')) return () => true;
  const exact = new Set(allowedHosts.filter((host) => !host.startsWith('*.')).map(hostNameOf));
  const suffixes = allowedHosts.filter((host) => host.startsWith('*.')).map((host) => host.slice(1));
  return (host) => {
    const name = hostNameOf(host);
    // No Host at all (HTTP/1.0) cannot come from a browser; an IP address cannot be rebound by DNS.
    if (name === '' || isIP(name) !== 0) return true;
    return exact.has(name) || suffixes.some((suffix) => name.endsWith(suffix));
  };
}

/**
 * DNS rebinding: a page on an attacker's name, once the name points at this server, reads and writes it
 * from the victim's browser. Its requests carry the attacker's name in Host, so any Host not allowed is
 * answered 421 Misdirected Request (JSON).
 */
export function hostGuardMiddleware(allowedHosts: readonly string[]): Middleware {
  const allowed = hostAllowed(allowedHosts);
  return (ctx, next) => {
    if (allowed(ctx.host) || anyHostPaths.has(normalisedPath(ctx.path))) return next();
    send(
      ctx,
      json(
        { message: `Host "${hostNameOf(ctx.host).slice(0, 100)}" is not served here (see ALLOWED_HOSTS)` },
        421,
      ),
    );
    return Promise.resolve();
  };
}
