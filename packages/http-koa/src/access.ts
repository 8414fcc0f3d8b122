import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ACCESS_KEY_MAX_LENGTH,
  ACCESS_KEY_PREFIX,
  type AccessKey,
  type AccessKeySecrets,
  type AccessOperation,
  type AccessTarget,
  Authenticate,
  CLOCK,
  type Clock,
  decideAccess,
} from '@hortus/core';
import { inject, injectable } from 'inversify';
import { type Context, type Middleware } from 'koa';
import { type AuthMode } from './config.js';
import { json, type RouteSpec, send } from './routing.js';

/** Secrets from node:crypto: 256 random bits, and SHA-256 (enough for random keys; no slow hash needed). */
export class NodeAccessKeySecrets implements AccessKeySecrets {
  generate(): string {
    return `${ACCESS_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  }

  hash(secret: string): string {
    return createHash('sha256').update(secret, 'utf8').digest('hex');
  }
}

export interface AccessSettings {
  readonly mode: AuthMode;
  /** How long "are keys in use" and each key lookup are reused; 0 asks the store every time. */
  readonly cacheMs: number;
}

export const ACCESS_SETTINGS = Symbol.for('hortus.http.AccessSettings');

/** Answered without a key: liveness and readiness, including the liveness texts of the old service. */
const openPaths = new Set(['/', '/api', '/api/data/latestdata', '/healthz', '/readyz']);

export function isOpenPath(path: string): boolean {
  const normalised = path.length > 1 ? path.replace(/\/$/u, '') : path;
  return openPaths.has(normalised.toLowerCase());
}

/** What the request carries once the access middleware has run. */
export interface RequestAccess {
  /** Whether this request needed a key (keys in use and not an open path). */
  readonly required: boolean;
  readonly key?: AccessKey;
}

const NOT_REQUIRED: RequestAccess = Object.freeze({ required: false });

export function accessOf(ctx: Context): RequestAccess | undefined {
  return (ctx.state as { access?: RequestAccess }).access;
}

/** How one route is guarded, derived once from its declaration when the router is built. */
export type AccessRule =
  | { readonly open: true }
  | {
      readonly open?: false;
      readonly operation: AccessOperation;
      readonly target: (ctx: Context) => AccessTarget;
    };

/** Routes that take no group but are no one user's data: any admin or client key may read them. */
const serviceRoutes = new Set([
  'GET /api/openapi.json',
  'GET /api/docs',
  'GET /api/notification/latestdata/github',
]);
/** GET routes that change data (SPEC makes them GETs). */
const writingGets = new Set(['GET /api/actions/', 'GET /api/devices/create']);
const ingestRoute = 'POST /api/data/readings';
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
 * The access rule of a route. A route declaring a `group` or `groupId` (query, path or body) touches that
 * group; a route declaring none touches data outside groups (a user's charts), which only keys for every
 * group reach. Absent values are left to the route's validation (every group field is required there);
 * present values that are not group names count as foreign groups.
 */
export function accessRuleOf(route: RouteSpec, fullPath: string): AccessRule {
  const { method } = route;
  const name = `${method.toUpperCase()} ${fullPath}`;
  if (method === 'get' && isOpenPath(fullPath)) return { open: true };
  if (name === ingestRoute) {
    return { operation: 'ingest', target: (ctx) => ({ groups: ingestGroups(ctx.request.body) }) };
  }
  const operation: AccessOperation = method !== 'get' || writingGets.has(name) ? 'write' : 'read';
  if (serviceRoutes.has(name)) return { operation, target: () => ({ scope: 'service' }) };
  const queryFields = [...declaredFields(route.query), ...declaredFields(route.unvalidatedQuery)];
  const paramFields = declaredFields(route.params);
  const bodyFields = declaredFields(route.body);
  if (queryFields.length + paramFields.length + bodyFields.length === 0) {
    return { operation, target: () => ({ scope: 'all-groups' }) };
  }
  return {
    operation,
    target: (ctx) => ({
      groups: [
        ...valuesOf(ctx.query, queryFields),
        ...valuesOf((ctx as unknown as { params?: unknown }).params, paramFields),
        ...valuesOf(ctx.request.body, bodyFields),
      ],
    }),
  };
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

  constructor(
    @inject(Authenticate) private readonly authenticate: Authenticate,
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
    let entry = this.keys.get(secret);
    if (entry === undefined) {
      // Oldest entry first in a Map: dropping it keeps the cache bounded whatever scanners send.
      if (this.keys.size >= MAX_CACHED_KEYS) this.keys.delete(this.keys.keys().next().value ?? '');
      entry = new ExpiringValue(() => this.authenticate.execute(secret), this.settings.cacheMs, this.now);
      this.keys.set(secret, entry);
    }
    return entry.get();
  }

  /** Whether requests need a key, when that is known without asking the store (mode, or a fresh answer). */
  private requiredNow(): boolean | undefined {
    if (this.settings.mode !== 'auto') return this.settings.mode === 'on';
    return this.inUse.fresh()?.value;
  }

  /** Runs before routing: open paths pass, everything else needs a valid key while keys are required. */
  middleware(): Middleware {
    const checked: Middleware = async (ctx, next) => {
      const state = ctx.state as { access?: RequestAccess };
      if (isOpenPath(ctx.path) || !(await this.required())) {
        state.access = NOT_REQUIRED;
        return next();
      }
      const header = ctx.get('Authorization');
      if (header === '') {
        unauthorized(ctx, 'An access key is required: send the header Authorization: Bearer <key>', false);
        return undefined;
      }
      const secret = bearerPattern.exec(header)?.[1];
      const key = secret === undefined ? undefined : await this.keyOf(secret);
      if (key === undefined) {
        unauthorized(ctx, 'The access key is not valid', true);
        return undefined;
      }
      state.access = { required: true, key };
      return next();
    };
    return (ctx, next) => {
      // No key needed, and known without waiting: the common case of a server without keys.
      if (this.requiredNow() === false) {
        (ctx.state as { access?: RequestAccess }).access = NOT_REQUIRED;
        return next();
      }
      return checked(ctx, next);
    };
  }

  /** The guard of one route, run after its body is parsed: 403 when the key may not do what it asks. */
  guard(rule: AccessRule): Middleware {
    return async (ctx, next) => {
      const access = accessOf(ctx);
      if (rule.open === true || access?.required === false) return next();
      // Keys are required but none was checked: the access middleware did not run, so refuse.
      if (access?.key === undefined) {
        unauthorized(ctx, 'An access key is required: send the header Authorization: Bearer <key>', false);
        return undefined;
      }
      const decision = decideAccess(access.key, rule.operation, rule.target(ctx));
      if (!decision.allowed) {
        forbidden(ctx, decision.reason);
        return undefined;
      }
      return next();
    };
  }
}
