import { type Middleware } from 'koa';
import { type PolicyTable } from '../routes/policy.js';
import { json } from '../routes/routing.js';
import { send } from '../koa/send.js';

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
