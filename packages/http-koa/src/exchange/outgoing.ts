import { sessionCookieHeader } from '../access/session-cookie.js';
import { type Reply } from '../routes/routing.js';

/**
 * An answer as every door writes it: status, headers (name, value, …; Set-Cookie may repeat), the media
 * type without parameters (the door adds the charset as Koa does), and the body.
 */
export interface Outgoing {
  readonly status: number;
  readonly headers: readonly string[];
  readonly type?: string;
  readonly body?: string | Uint8Array | AsyncIterable<string>;
  /** A download's name, for Content-Disposition. */
  readonly filename?: string;
}

/** The Content-Security-Policy of a page that says none: nothing but inline styles. */
const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

/** A reply written out, after the `headers` the answer already carries (caching, an error's). */
export function outgoingOf(reply: Reply, secure: boolean, headers: readonly string[] = []): Outgoing {
  const out = [...headers];
  const change = reply.sessionCookie;
  if (change !== undefined) {
    out.push('Set-Cookie', sessionCookieHeader('start' in change ? change.start : undefined, secure));
  }
  const { status } = reply;
  if ('json' in reply) {
    // Serialised here so that a bare string or null (group settings may be any JSON) stays JSON.
    return { status, headers: out, type: 'application/json', body: JSON.stringify(reply.json) ?? 'null' };
  }
  if ('text' in reply) return { status, headers: out, type: 'text/plain', body: reply.text };
  if ('html' in reply) {
    out.push('Content-Security-Policy', reply.csp ?? PAGE_POLICY);
    return { status, headers: out, type: 'text/html', body: reply.html };
  }
  if ('stream' in reply) {
    return {
      status,
      headers: out,
      type: reply.type,
      body: reply.stream,
      ...(reply.filename === undefined ? {} : { filename: reply.filename }),
    };
  }
  if ('bytes' in reply) {
    for (const [name, value] of Object.entries(reply.headers ?? {})) out.push(name, value);
    return { status, headers: out, type: reply.type, body: reply.bytes };
  }
  return { status, headers: out };
}

/**
 * The caching headers of a route's answer: a tagged 200 or 304 carries its ETag, and a tagged 200 says
 * `no-cache` so that browsers revalidate every poll, sending If-None-Match by themselves. What a credential
 * unlocks is its holder's alone (`credentialed`): shared caches must not keep it.
 */
export function cachingHeaders(tag: string | undefined, status: number, credentialed: boolean): string[] {
  const tagged = tag !== undefined && (status === 200 || status === 304);
  const directive = tagged && status === 200 ? 'no-cache' : undefined;
  const out = tagged ? ['ETag', tag] : [];
  if (credentialed) out.push('Cache-Control', directive === undefined ? 'private' : `private, ${directive}`);
  else if (directive !== undefined) out.push('Cache-Control', directive);
  return out;
}

/** A Cache-Control value made private (the access check's rule for every answer to a credential). */
export function privateCaching(cacheControl: string): string | undefined {
  if (/\bprivate\b/iu.test(cacheControl)) return undefined;
  return cacheControl === '' ? 'private' : `private, ${cacheControl}`;
}

/** The request headers an answer to a credential varies by, after the Origin that CORS names. */
export const CREDENTIAL_VARY = ['Authorization', 'Cookie', 'Origin'] as const;

/**
 * The Vary of an answer: CORS adds Origin when the request names one, then the access check adds
 * CREDENTIAL_VARY when a credential is in play (each name once, in that order).
 */
export function varyOf(originSent: boolean, credentialed: boolean): string | undefined {
  if (!credentialed) return originSent ? 'Origin' : undefined;
  return originSent ? 'Origin, Authorization, Cookie' : CREDENTIAL_VARY.join(', ');
}
