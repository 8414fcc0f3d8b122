import { setTimeout as delay } from 'node:timers/promises';
import {
  ACCESS_KEY_MAX_LENGTH,
  ACCESS_KEY_PREFIX,
  type AccessKey,
  type AccessOperation,
  type AccessTarget,
  ANONYMOUS,
  Authenticate,
  type Caller,
  CLOCK,
  type Clock,
  decideAccess,
  decideSessionAccess,
  type SessionPrincipal,
  VerifySession,
} from '@hortus/core';
import { inject, injectable } from 'inversify';
import { type Context, type Middleware } from 'koa';
import { type AuthMode } from '../config.js';
import { type PolicyTable } from '../routes/policy.js';
import { json, type RouteSpec, send } from '../routes/routing.js';
import { clearSessionCookie, cookieWriteAllowed, sessionCookieIn } from './session-cookie.js';

export interface AccessSettings {
  readonly mode: AuthMode;
  /** How long "are keys in use" and each key lookup are reused; 0 asks the store every time. */
  readonly cacheMs: number;
}

export const ACCESS_SETTINGS = Symbol.for('hortus.http.AccessSettings');

/** What the request carries once the access middleware has run. */
export interface RequestAccess {
  /** Whether keys are required right now (AUTH on, or auto with keys in use). */
  readonly required: boolean;
  readonly key?: AccessKey;
  /** The session of a valid log-in token. */
  readonly session?: SessionPrincipal;
}

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

/** What a route's target is read from: the parsed query, the path parameters and the body. */
export interface RequestParts {
  readonly query: unknown;
  readonly params: unknown;
  readonly body: unknown;
}

/** How one route is guarded, derived once from its declaration when the router is built. */
export type AccessRule =
  | { readonly open: true }
  | {
      readonly open?: false;
      readonly operation: AccessOperation;
      readonly target: (request: RequestParts) => AccessTarget;
    };

/** Whether a schema declares the named property. */
function declares(schema: unknown, name: string): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties !== undefined && name in properties;
}

const groupFields = ['group', 'groupId'];

function declaredFields(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties === undefined ? [] : Object.keys(properties).filter((name) => groupFields.includes(name));
}

/** The values given for the named fields: strings as they are, repeated query parameters one by one. */
function valuesOf(source: unknown, fields: readonly string[]): unknown[] {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return [];
  const record = source as Record<string, unknown>;
  return fields.flatMap((field) => {
    const value = record[field];
    if (value === undefined) return [];
    return Array.isArray(value) ? (value as unknown[]) : [value];
  });
}

/** The groups of a reading batch: one object, the compact form, or an array of either. */
function ingestGroups(body: unknown): unknown[] {
  const items: unknown[] = Array.isArray(body) ? body : [body];
  return items.flatMap((item) => valuesOf(item, ['group']));
}

/**
 * The access rule of a route, from the access it declares. A `group` route touches the groups its request
 * names in the `group` or `groupId` fields its schemas declare (query, path or body); absent values are left
 * to the route's validation (every group field is required there), and present values that are not group
 * names count as foreign groups. A route whose declaration cannot be checked is refused when it is built.
 */
export function accessRuleOf(route: RouteSpec, fullPath: string): AccessRule {
  const name = `${route.method.toUpperCase()} ${fullPath}`;
  const operation: AccessOperation = route.writes ? 'write' : 'read';
  switch (route.access) {
    case 'open':
    case 'account':
      return { open: true };
    case 'ingest':
      return { operation: 'ingest', target: (request) => ({ groups: ingestGroups(request.body) }) };
    case 'service':
      return { operation, target: () => ({ scope: 'service' }) };
    case 'admin':
      return { operation, target: () => ({ scope: 'operator' }) };
    case 'all-groups':
      return { operation, target: () => ({ scope: 'all-groups' }) };
    case 'user': {
      // One user's data (charts, e-mail): a log-in token reaches only its own user's.
      if (!declares(route.params, 'userId')) throw new Error(`${name} is a user's route without :userId`);
      return {
        operation,
        target: (request) => ({
          scope: 'user',
          userId: (request.params as Record<string, unknown> | undefined)?.['userId'],
        }),
      };
    }
    case 'group': {
      const queryFields = [...declaredFields(route.query), ...declaredFields(route.unvalidatedQuery)];
      const paramFields = declaredFields(route.params);
      const bodyFields = declaredFields(route.body);
      if (queryFields.length + paramFields.length + bodyFields.length === 0) {
        throw new Error(`${name} is a group's route that names no group or groupId`);
      }
      return {
        operation,
        target: (request) => ({
          groups: [
            ...valuesOf(request.query, queryFields),
            ...valuesOf(request.params, paramFields),
            ...valuesOf(request.body, bodyFields),
          ],
        }),
      };
    }
  }
}

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
      return { kind: 'user', userId: credential.session.userId, group: credential.session.group };
    case 'invalid':
      return { kind: 'anonymous', rejectedCredential: true };
  }
}

export type RouteDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 401 | 403; readonly message: string };

const ROUTE_ALLOWED: RouteDecision = { allowed: true };

/** Whether the caller may use one route on what the request names; the guard's decision, without a context. */
export function decideRoute(
  rule: AccessRule,
  access: RequestAccess | undefined,
  request: RequestParts,
): RouteDecision {
  if (rule.open === true || access?.required === false) return ROUTE_ALLOWED;
  if (access?.session !== undefined) {
    const decision = decideSessionAccess(access.session, rule.operation, rule.target(request));
    return decision.allowed ? ROUTE_ALLOWED : { allowed: false, status: 403, message: decision.reason };
  }
  // Keys are required but none was checked: the access middleware did not run, so refuse.
  if (access?.key === undefined) {
    return {
      allowed: false,
      status: 401,
      message: 'An access key is required: send the header Authorization: Bearer <key>',
    };
  }
  const decision = decideAccess(access.key, rule.operation, rule.target(request));
  return decision.allowed ? ROUTE_ALLOWED : { allowed: false, status: 403, message: decision.reason };
}

export function forbidden(ctx: Context, message: string): void {
  send(ctx, json({ message }, 403));
}

/** How long a request waits for a refresh when an answer from moments ago is at hand. */
export const REFRESH_WAIT_MS = 250;

/**
 * A value loaded from the store and reused for `ttlMs`. Concurrent requests share one load. Once it has
 * expired, a request waits for the reload at most REFRESH_WAIT_MS and otherwise goes on with the previous
 * value, as it does when the reload fails: a slow or absent store must not add its timeout to every
 * request. Only without any previous value does a request wait for (or fail with) the load.
 */
class ExpiringValue<V> {
  private known: { readonly value: V } | undefined;
  private until = 0;
  private loading: Promise<V> | undefined;

  constructor(
    private readonly load: () => Promise<V>,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The value while it is fresh, without waiting; undefined once it has expired or before the first load. */
  fresh(): { readonly value: V } | undefined {
    return this.known !== undefined && this.now() < this.until ? this.known : undefined;
  }

  async get(): Promise<V> {
    if (this.known !== undefined && this.now() < this.until) return this.known.value;
    this.loading ??= this.load()
      .then((value) => {
        this.known = { value };
        this.until = this.now() + this.ttlMs;
        return value;
      })
      .finally(() => {
        this.loading = undefined;
      });
    if (this.known === undefined) return this.loading;
    const previous = this.known.value;
    return Promise.race([
      this.loading.catch(() => previous),
      delay(REFRESH_WAIT_MS, previous, { ref: false }),
    ]);
  }
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
      return claims === undefined ? undefined : { userId: claims.userId, group: claims.group };
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
    const uncredentialed = (ctx: Context): boolean =>
      ctx.get('Authorization') === '' && sessionCookieIn(ctx.get('Cookie')) === undefined;
    const checked: Middleware = async (ctx, next) => {
      const state = ctx.state as { access?: RequestAccess; caller?: Caller };
      const check = policies.checkBeforeRouting(ctx.path);
      const account = check === 'account';
      if (check === 'open') {
        state.access = NOT_REQUIRED;
        return next();
      }
      const required = await this.required();
      if (!account && !required && uncredentialed(ctx)) {
        state.access = NOT_REQUIRED;
        return next();
      }
      // What a credential unlocks is its holder's alone: shared caches must neither keep it nor hand it to others.
      ctx.vary('Authorization');
      ctx.vary('Cookie');
      ctx.vary('Origin');
      try {
        await this.authenticated(ctx, next, { required, account, policies, allowedOrigins });
      } finally {
        const cacheControl = String(ctx.res.getHeader('Cache-Control') ?? '');
        if (!/\bprivate\b/iu.test(cacheControl)) {
          ctx.set('Cache-Control', cacheControl === '' ? 'private' : `private, ${cacheControl}`);
        }
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

  /** The guard of one route, run after its body is parsed: 403 when the key may not do what it asks. */
  guard(rule: AccessRule): Middleware {
    return async (ctx, next) => {
      const parts = {
        query: ctx.query,
        params: (ctx as unknown as { params?: unknown }).params,
        body: ctx.request.body,
      };
      const decision = decideRoute(rule, accessOf(ctx), parts);
      if (decision.allowed) return next();
      if (decision.status === 401) unauthorized(ctx, decision.message, false);
      else forbidden(ctx, decision.message);
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
    if (authorization === '' && (cookie === undefined || !required)) {
      return required ? undefined : OPEN_TO_ANYONE;
    }
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
