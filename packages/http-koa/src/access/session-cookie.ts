import { type Context } from 'koa';

/**
 * The session cookie a browser gets at log-in, beside the token in the answer: the web client sends
 * credentials only on its profile route, so its other requests are recognised by this cookie. It carries
 * the log-in token itself (the same claims, expiry and revocation). HttpOnly: page scripts cannot read it;
 * SameSite=Strict: no other site's page makes the browser send it; Path=/api: only the API receives it; no
 * Max-Age or Expires: it ends when the browser does.
 */
export const SESSION_COOKIE = 'hortus_session';

const cookieAttributes = 'Path=/api; HttpOnly; SameSite=Strict';

/** The session cookie's value in a Cookie header, or undefined. */
export function sessionCookieIn(cookieHeader: string | undefined): string | undefined {
  if (cookieHeader === undefined || cookieHeader === '') return undefined;
  for (const pair of cookieHeader.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 0 || pair.slice(0, separator).trim() !== SESSION_COOKIE) continue;
    const value = pair.slice(separator + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/**
 * The Set-Cookie value that starts a session carrying `token`, or ends it (undefined). Over HTTPS (directly,
 * or a trusted proxy's X-Forwarded-Proto) the browser must never send it in clear.
 */
export function sessionCookieHeader(token: string | undefined, secure: boolean): string {
  const flag = secure ? '; Secure' : '';
  return token === undefined
    ? `${SESSION_COOKIE}=; ${cookieAttributes}${flag}; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`
    : `${SESSION_COOKIE}=${token}; ${cookieAttributes}${flag}`;
}

export function clearSessionCookie(ctx: Context): void {
  ctx.append('Set-Cookie', sessionCookieHeader(undefined, ctx.secure));
}

/**
 * Whether a request that changes data may use the cookie: a browser sends it with any same-site request
 * (another port of the same host is the same site), so the request must come from this origin itself or
 * from an origin CORS allows. Sec-Fetch-Site and Origin say where it comes from; a client that sends
 * neither is not a browser page.
 */
export function cookieWriteAllowed(ctx: Context, allowedOrigins: ReadonlySet<string>): boolean {
  const site = ctx.get('Sec-Fetch-Site').toLowerCase();
  const origin = ctx.get('Origin').toLowerCase();
  const ownOrigin = `${ctx.protocol}://${ctx.host}`.toLowerCase();
  const originAllowed = origin === ownOrigin || allowedOrigins.has(origin);
  if (site === '' || site === 'same-origin' || site === 'none') return origin === '' || originAllowed;
  return originAllowed;
}
