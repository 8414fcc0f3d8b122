import {
  ACCESS_KEY_MAX_LENGTH,
  ACCESS_KEY_PREFIX,
  type AccessKey,
  ANONYMOUS,
  Authenticate,
  type Caller,
  CLOCK,
  type Clock,
  type SessionPrincipal,
  VerifySession,
} from '@hortus/core';
import { inject, injectable } from 'inversify';
import { type Context, type Middleware } from 'koa';
import { type AuthMode } from '../config.js';
import { queryOf } from '../edge/query.js';
import { type PolicyTable } from '../routes/policy.js';
import { type ErrorStyle, json } from '../routes/routing.js';
import { errorBody } from '../exchange/errors.js';
import { send } from '../koa/send.js';
import { ExpiringValue } from './expiring-value.js';
import {
  type AccessRule,
  answersToCredential,
  credentialSentIn,
  decideRoute,
  type RequestAccess,
} from '../exchange/access.js';
import { CREDENTIAL_VARY, privateCaching } from '../exchange/answer.js';
import { clearSessionCookie, cookieWriteAllowed, sessionCookieIn } from './session-cookie.js';

export interface AccessSettings {
  readonly mode: AuthMode;
  /** How long "are keys in use" and each key lookup are reused; 0 asks the store every time. */
  readonly cacheMs: number;
}

export const ACCESS_SETTINGS = Symbol.for('hortus.http.AccessSettings');

const MESSAGE_STYLE: ErrorStyle = { body: 'message', serverError: 'Internal Server Error' };
const NOT_REQUIRED: RequestAccess = Object.freeze({ required: false });
const OPEN_TO_ANYONE = Object.freeze({ access: NOT_REQUIRED, caller: ANONYMOUS });

export function accessOf(ctx: Context): RequestAccess | undefined {
  return (ctx.state as { access?: RequestAccess }).access;
}

/** Who makes the request, for the use cases that decide by it (profile, e-mail change, sign-up). */
export function callerOf(ctx: Context): Caller {
  return (ctx.state as { caller?: Caller }).caller ?? ANONYMOUS;
}

/**
 * A credential as sent: an access key, a log-in token (in the header or the session cookie), or text that
 * is neither (refused).
 */
type Credential =
  | { readonly kind: 'key'; readonly key: AccessKey }
  | { readonly kind: 'session'; readonly session: SessionPrincipal; readonly fromCookie?: true }
  | { readonly kind: 'invalid'; readonly looksLikeToken: boolean; readonly fromCookie?: true };

/** A JWT's shape: three base64url parts. Anything else is taken for an access key. */
const tokenShape = /^[\w-]+\.[\w-]+\.[\w-]*$/u;

const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/iu;
/** Bounds the cache of key lookups: unknown secrets sent by a scanner must not grow it without end. */
const MAX_CACHED_KEYS = 1000;

function unauthorized(ctx: Context, message: string, invalid: boolean): void {
  ctx.set(
    'WWW-Authenticate',
    invalid ? 'Bearer realm="hortus", error="invalid_token"' : 'Bearer realm="hortus"',
  );
  send(ctx, json({ message }, 401));
}

function callerFor(credential: Credential | undefined): Caller {
  if (credential === undefined) return ANONYMOUS;
  switch (credential.kind) {
    case 'key':
      return { kind: 'key', key: credential.key };
    case 'session':
      return {
        kind: 'user',
        userId: credential.session.userId,
        group: credential.session.group,
        role: credential.session.role,
      };
    case 'invalid':
      return { kind: 'anonymous', rejectedCredential: true };
  }
}

export function forbidden(ctx: Context, message: string): void {
  send(ctx, json({ message }, 403));
}

/**
 * Access keys on the HTTP side: whether keys are required, who a bearer key belongs to (both reused for
 * `cacheMs`), the middleware that answers 401, and the per-route guard that answers 403. A revoked key or
 * the first key ever created takes effect within `cacheMs`.
 */
@injectable()
export class AccessControl {
  private readonly inUse: ExpiringValue<boolean>;
  private readonly keys = new Map<string, ExpiringValue<AccessKey | undefined>>();
  private readonly sessions = new Map<string, ExpiringValue<SessionPrincipal | undefined>>();

  constructor(
    @inject(Authenticate) private readonly authenticate: Authenticate,
    @inject(VerifySession) private readonly verifySession: VerifySession,
    @inject(ACCESS_SETTINGS) private readonly settings: AccessSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.inUse = new ExpiringValue(() => authenticate.keysInUse(), settings.cacheMs, this.now);
  }

  private readonly now = (): number => this.clock.now().getTime();

  /** Whether requests need a key right now. */
  async required(): Promise<boolean> {
    if (this.settings.mode !== 'auto') return this.settings.mode === 'on';
    return this.inUse.get();
  }

  /** The active key of a secret, or undefined. */
  async keyOf(secret: string): Promise<AccessKey | undefined> {
    // Text that cannot be a key is refused before it reaches the store or the cache.
    if (!secret.startsWith(ACCESS_KEY_PREFIX) || secret.length > ACCESS_KEY_MAX_LENGTH) return undefined;
    return this.cached(this.keys, secret, () => this.authenticate.execute(secret));
  }

  /**
   * The session of a log-in token, or undefined. Reused for `cacheMs` like keys: a reset, a revocation or
   * a deleted user ends a token within that time.
   */
  async sessionOf(token: string): Promise<SessionPrincipal | undefined> {
    return this.cached(this.sessions, token, async () => {
      const claims = await this.verifySession.execute(token);
      return claims === undefined
        ? undefined
        : { userId: claims.userId, group: claims.group, role: claims.role };
    });
  }

  private cached<V>(
    cache: Map<string, ExpiringValue<V>>,
    secret: string,
    load: () => Promise<V>,
  ): Promise<V> {
    let entry = cache.get(secret);
    if (entry === undefined) {
      // Oldest entry first in a Map: dropping it keeps the cache bounded whatever scanners send.
      if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value ?? '');
      entry = new ExpiringValue(load, this.settings.cacheMs, this.now);
      cache.set(secret, entry);
    }
    return entry.get();
  }

  /** Resolves a bearer credential: text starting with the key prefix is a key, anything else a token. */
  private async credentialOf(header: string): Promise<Credential> {
    const secret = bearerPattern.exec(header)?.[1];
    const looksLikeToken = secret !== undefined && tokenShape.test(secret);
    if (secret === undefined) return { kind: 'invalid', looksLikeToken };
    if (!looksLikeToken) {
      const key = await this.keyOf(secret);
      return key === undefined ? { kind: 'invalid', looksLikeToken } : { kind: 'key', key };
    }
    const session = await this.sessionOf(secret);
    return session === undefined ? { kind: 'invalid', looksLikeToken } : { kind: 'session', session };
  }

  /**
   * The session cookie's log-in token. It is only ever a token: a key in a cookie is refused, since keys
   * belong to boxes and scripts, which send the header.
   */
  private async cookieCredentialOf(token: string): Promise<Credential> {
    const session = tokenShape.test(token) ? await this.sessionOf(token) : undefined;
    return session === undefined
      ? { kind: 'invalid', looksLikeToken: true, fromCookie: true }
      : { kind: 'session', session, fromCookie: true };
  }

  /** Whether requests need a key, when that is known without asking the store (mode, or a fresh answer). */
  private requiredNow(): boolean | undefined {
    if (this.settings.mode !== 'auto') return this.settings.mode === 'on';
    return this.inUse.fresh()?.value;
  }

  /**
   * Runs before routing: open paths pass; the account routes pass with whatever credential was sent; every
   * other path needs a valid key or log-in token while keys are required. A credential sent while keys are
   * not required still identifies the caller (the e-mail change and profile routes ask who it is).
   */
  middleware(policies: PolicyTable, corsOrigins: readonly string[] = []): Middleware {
    const allowedOrigins = new Set(corsOrigins.map((origin) => origin.toLowerCase()));
    const uncredentialed = (ctx: Context): boolean => !credentialSentIn(ctx.headers);
    const checked: Middleware = async (ctx, next) => {
      const state = ctx.state as { access?: RequestAccess; caller?: Caller };
      const check = policies.checkBeforeRouting(ctx.path);
      const account = check === 'account';
      if (check === 'open') {
        state.access = NOT_REQUIRED;
        return next();
      }
      const required = await this.required();
      if (!answersToCredential(check, required, !uncredentialed(ctx))) {
        state.access = NOT_REQUIRED;
        return next();
      }
      // What a credential unlocks is its holder's alone: shared caches must neither keep it nor hand it to others.
      for (const name of CREDENTIAL_VARY) ctx.vary(name);
      try {
        await this.authenticated(ctx, next, { required, account, policies, allowedOrigins });
      } finally {
        const made = privateCaching(String(ctx.res.getHeader('Cache-Control') ?? ''));
        if (made !== undefined) ctx.set('Cache-Control', made);
      }
      return undefined;
    };
    return (ctx, next) => {
      // No key needed and none sent, known without waiting: the common case of a server without keys.
      if (
        this.requiredNow() === false &&
        uncredentialed(ctx) &&
        policies.checkBeforeRouting(ctx.path) !== 'account'
      ) {
        (ctx.state as { access?: RequestAccess }).access = NOT_REQUIRED;
        return next();
      }
      return checked(ctx, next);
    };
  }

  /**
   * Notes the caller and what its credential unlocks. While keys are required, a path other than the account
   * routes is 401 without a valid key or log-in token.
   */
  private async authenticated(
    ctx: Context,
    next: () => Promise<unknown>,
    request: {
      readonly required: boolean;
      readonly account: boolean;
      readonly policies: PolicyTable;
      readonly allowedOrigins: ReadonlySet<string>;
    },
  ): Promise<void> {
    const { required, account } = request;
    const state = ctx.state as { access?: RequestAccess; caller?: Caller };
    const header = ctx.get('Authorization');
    const cookie = sessionCookieIn(ctx.get('Cookie'));
    // The header wins: a script or box that sends one means it, whatever cookie a browser holds.
    const credential =
      header !== ''
        ? await this.credentialOf(header)
        : cookie === undefined
          ? undefined
          : await this.cookieCredentialOf(cookie);
    // A cookie whose session has ended is dropped, so the browser stops sending it.
    if (credential?.kind === 'invalid' && credential.fromCookie === true) clearSessionCookie(ctx);
    if (
      credential?.kind === 'session' &&
      credential.fromCookie === true &&
      request.policies.writes(ctx.method, ctx.path) &&
      !cookieWriteAllowed(ctx, request.allowedOrigins)
    ) {
      forbidden(
        ctx,
        "A change made with the session cookie must come from this server's own pages or an origin in CORS_ORIGINS",
      );
      return;
    }
    state.caller = callerFor(credential);
    if (account || !required) {
      state.access = {
        required,
        ...(credential?.kind === 'key' ? { key: credential.key } : {}),
        ...(credential?.kind === 'session' ? { session: credential.session } : {}),
      };
      await next();
      return;
    }
    if (credential === undefined) {
      unauthorized(ctx, 'An access key is required: send the header Authorization: Bearer <key>', false);
      return;
    }
    if (credential.kind === 'invalid') {
      unauthorized(
        ctx,
        credential.fromCookie === true
          ? 'The session has ended: log in again'
          : credential.looksLikeToken
            ? 'The log-in token is not valid or has expired'
            : 'The access key is not valid',
        true,
      );
      return;
    }
    state.access =
      credential.kind === 'key'
        ? { required: true, key: credential.key }
        : { required: true, session: credential.session };
    await next();
  }

  /**
   * The guard of one route, run after its body is parsed: 403 when the credential may not do what it asks,
   * in the route's error shape (`{message}`, `{error}` or plain text, as its area answers errors).
   */
  guard(rule: AccessRule, style: ErrorStyle = MESSAGE_STYLE): Middleware {
    return async (ctx, next) => {
      const parts = {
        query: queryOf(ctx),
        params: (ctx as unknown as { params?: unknown }).params,
        body: ctx.request.body,
      };
      const decision = decideRoute(rule, accessOf(ctx), parts);
      if (decision.allowed) return next();
      if (decision.status === 401) unauthorized(ctx, decision.message, false);
      else send(ctx, errorBody(style, 403, decision.message));
      return undefined;
    };
  }

  /**
   * The access of a request when it is known without waiting (the mode, or fresh cached answers) and needs no
   * 401; undefined when only the middleware can tell. The poll lane serves a request only when this knows.
   */
  accessKnownNow(
    authorization: string,
    cookieHeader?: string,
  ): { readonly access: RequestAccess; readonly caller: Caller } | undefined {
    const required = this.requiredNow();
    if (required === undefined) return undefined;
    const cookie = authorization === '' ? sessionCookieIn(cookieHeader) : undefined;
    if (authorization === '' && cookie === undefined) return required ? undefined : OPEN_TO_ANYONE;
    // The cookie carries only log-in tokens: a key in it is the middleware's 401 (cookieCredentialOf), even
    // while the same key's lookup is cached from its use in the header. A cookie is a credential also while
    // keys are not required: the middleware then answers privately, and drops a cookie whose session ended.
    if (cookie !== undefined && !tokenShape.test(cookie)) return undefined;
    const secret = cookie ?? bearerPattern.exec(authorization)?.[1];
    if (secret === undefined) return undefined;
    if (tokenShape.test(secret)) {
      const session = this.sessions.get(secret)?.fresh()?.value;
      if (session === undefined) return undefined;
      return { access: { required, session }, caller: callerFor({ kind: 'session', session }) };
    }
    const key = this.keys.get(secret)?.fresh()?.value;
    if (key === undefined) return undefined;
    return { access: { required, key }, caller: callerFor({ kind: 'key', key }) };
  }
}
