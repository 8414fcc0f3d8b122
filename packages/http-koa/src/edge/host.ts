import { type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { type Middleware } from 'koa';
import { type TrustProxy } from '../config.js';
import { normalisedPath } from '../routes/policy.js';
import { json } from '../routes/routing.js';
import { send } from '../koa/send.js';
import { normaliseAddress, trustedProxy } from './client-address.js';

/** Paths answered whatever the Host: they say only whether the server runs, and orchestrators probe them. */
const anyHostPaths = new Set(['/healthz', '/readyz']);

/** The host name of a Host header value, lower case, without port or IPv6 brackets. */
export function hostNameOf(host: string): string {
  const trimmed = host.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\]/u.exec(trimmed);
  if (bracketed?.[1] !== undefined) return bracketed[1];
  return trimmed.replace(/:\d*$/u, '').replace(/\.$/u, '');
}

/** RFC 3986's host [":" port]: an IP literal in brackets, or a registered name (or IPv4) of name characters. */
const hostAndPort = /^(?:\[([\da-f:.]+)\]|([\w.~-]*))(?::\d*)?$/u;

/**
 * The host name of a Host header value parsed strictly (RFC 3986 host[:port]): an IPv6 literal in brackets
 * with nothing after "]" but a port, or a name of letters, digits, ".", "-", "_", "~". Lower case, without
 * port, brackets or a trailing dot; undefined for anything else, so no text after a valid part is ignored.
 */
export function strictHostNameOf(host: string): string | undefined {
  const match = hostAndPort.exec(host.trim().toLowerCase());
  if (match === null) return undefined;
  const [, literal, name] = match;
  if (literal !== undefined) return isIP(literal) === 6 ? literal : undefined;
  return (name ?? '').replace(/\.$/u, '');
}

/**
 * Whether a Host header names an allowed host (see HttpSettings.allowedHosts). A Host names one host: a
 * list (`evil.example, a.localhost`) or text that is not host[:port] is refused whatever its parts, rather
 * than judged by one of them.
 */
export function hostAllowed(allowedHosts: readonly string[]): (host: string) => boolean {
  if (allowedHosts.includes('*')) return () => true;
  const exact = new Set(allowedHosts.filter((host) => !host.startsWith('*.')).map(hostNameOf));
  const suffixes = allowedHosts.filter((host) => host.startsWith('*.')).map((host) => host.slice(1));
  return (host) => {
    if (host.includes(',')) return false;
    const name = strictHostNameOf(host);
    if (name === undefined) return false;
    // No Host at all (HTTP/1.0) cannot come from a browser; an IP address cannot be rebound by DNS.
    if (name === '' || isIP(name) !== 0) return true;
    return exact.has(name) || suffixes.some((suffix) => name.endsWith(suffix));
  };
}

/** The host check of a request: whether it may be served, and which host was refused if not. */
export type HostCheck = (
  request: IncomingMessage,
) => { readonly allowed: true } | { readonly refused: string };

const HOST_ALLOWED = Object.freeze({ allowed: true as const });

/**
 * The one Host check of both request paths (the Koa chain and the poll lane), against DNS rebinding. The
 * Host the client sent is always checked. X-Forwarded-Host counts only from a proxy TRUST_PROXY trusts, and
 * is then checked too (every entry); from anyone else it is removed, so that nothing after this (Koa's
 * `ctx.host` among them) reads a host a client made up.
 */
export function hostCheck(allowedHosts: readonly string[], trust: TrustProxy): HostCheck {
  const allowed = hostAllowed(allowedHosts);
  const trusted = trustedProxy(trust);
  // Nearly every request names the same host: its verdict is kept rather than worked out again.
  let lastHost: string | undefined;
  let lastAllowed = false;
  const sentHostAllowed = (host: string): boolean => {
    if (host !== lastHost) {
      lastHost = host;
      lastAllowed = allowed(host);
    }
    return lastAllowed;
  };
  return (request) => {
    const { headers } = request;
    const host = headers.host ?? '';
    if (!sentHostAllowed(host)) return { refused: host };
    const forwarded = headers['x-forwarded-host'];
    if (forwarded === undefined) return HOST_ALLOWED;
    if (!trusted(normaliseAddress(request.socket.remoteAddress ?? ''))) {
      delete headers['x-forwarded-host'];
      return HOST_ALLOWED;
    }
    const names = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded).split(',');
    const refused = names.find((name) => !allowed(name.trim()));
    return refused === undefined ? HOST_ALLOWED : { refused };
  };
}

/**
 * DNS rebinding: a page on an attacker's name, once the name points at this server, reads and writes it
 * from the victim's browser. Its requests carry the attacker's name in Host, so any Host not allowed is
 * answered 421 Misdirected Request (JSON).
 */
export function hostGuardMiddleware(check: HostCheck): Middleware {
  return (ctx, next) => {
    const verdict = check(ctx.req);
    if ('allowed' in verdict || anyHostPaths.has(normalisedPath(ctx.path))) return next();
    send(
      ctx,
      json(
        {
          message: `Host "${hostNameOf(verdict.refused).slice(0, 100)}" is not served here (see ALLOWED_HOSTS)`,
        },
        421,
      ),
    );
    return Promise.resolve();
  };
}
