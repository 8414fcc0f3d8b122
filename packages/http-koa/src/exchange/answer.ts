import { StoreDeadlineError, StoreUnavailableError } from '@hortus/core';
import { sessionCookieHeader } from '../access/session-cookie.js';
import {
  type HttpUseCases,
  type Reply,
  type RouteErrorPolicy,
  type RouteInput,
  type RouterSpec,
  type RouteSpec,
} from '../routes/routing.js';

/**
 * What a route answers, with conditional GET: 304 when If-None-Match names the current tag; for a route
 * cached by its tag, the serialised answer kept for that tag, else the route's own reply (cached when it is
 * a 200 of JSON). If-None-Match `*` holds once the route has found what it names (a missing group is its 404).
 */
export type Answer =
  | { readonly tag: string; readonly notModified: true }
  | { readonly tag: string; readonly body: string }
  | { readonly tag: string | undefined; readonly reply: Reply };

export async function answerOf(
  route: RouteSpec,
  input: RouteInput,
  useCases: HttpUseCases,
  answers: AnswerCache,
  ifNoneMatch: string,
): Promise<Answer> {
  const tag = route.entityTag === undefined ? undefined : await route.entityTag(input, useCases);
  if (tag === undefined) return { tag, reply: await route.handle(input, useCases) };
  if (noneMatchFails(ifNoneMatch, tag)) return { tag, notModified: true };
  const build = async (): Promise<string | Reply> => {
    const reply = await route.handle(input, useCases);
    if (reply.status !== 200 || !('json' in reply)) return reply;
    // Serialised here so that a bare string or null (group settings may be any JSON) stays JSON.
    return JSON.stringify(reply.json) ?? 'null';
  };
  const body = route.cacheByTag === true ? await answers.answer(tag, build) : await build();
  if (typeof body !== 'string') return { tag, reply: body };
  return namesWildcard(ifNoneMatch) ? { tag, notModified: true } : { tag, body };
}

/**
 * An answer written out with its caching headers (cachingHeaders); `secure` marks a session cookie it
 * starts or ends as HTTPS-only.
 */
export function outgoingOfAnswer(answer: Answer, secure: boolean, credentialed: boolean): Outgoing {
  if ('notModified' in answer) {
    return { status: 304, headers: cachingHeaders(answer.tag, 304, credentialed) };
  }
  if ('body' in answer) {
    const headers = cachingHeaders(answer.tag, 200, credentialed);
    return { status: 200, headers, type: 'application/json', body: answer.body };
  }
  const { reply, tag } = answer;
  return outgoingOf(reply, secure, cachingHeaders(tag, reply.status, credentialed));
}

/** Per application, never shared: each router's cache of serialised answers (see AnswerCache). */
export interface Answering {
  readonly cacheOf: (spec: RouterSpec) => AnswerCache;
}

/** `bounds`: how long requests wait for a build and how many run at once, across every router. */
export function answering(bounds?: BuildBounds): Answering {
  const caches = new Map<RouterSpec, AnswerCache>();
  const slots = new BuildSlots(bounds);
  return {
    cacheOf: (spec) => {
      let cache = caches.get(spec);
      if (cache === undefined) {
        cache = new AnswerCache(CACHED_ANSWERS, slots);
        caches.set(spec, cache);
      }
      return cache;
    },
  };
}

/** How a route's errors are written: its router's style with its own changes, and its body limit. */
export function errorPolicyOfRoute(
  spec: RouterSpec,
  route: RouteSpec,
  bodyLimitBytes: number | undefined,
): RouteErrorPolicy {
  return {
    style: { ...spec.style, ...route.style },
    statusFor: route.statusFor ?? {},
    ...(bodyLimitBytes === undefined ? {} : { bodyLimitBytes }),
  };
}

// ---- the answer written out: status, headers, body ----------------------------------------------------

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

/** What a browser page may read of a cross-origin answer beside the simple headers. */
export const CORS_EXPOSED_HEADERS = 'X-Request-Id, Retry-After';

/** The origins allowed to call with credentials, compared case-insensitively. */
export function allowedOrigins(origins: readonly string[]): ReadonlySet<string> {
  return new Set(origins.map((origin) => origin.toLowerCase()));
}

/**
 * The CORS headers an answer to `origin` carries, as name, value, name, value: none unless the origin is
 * allowed. The Koa chain's CORS middleware and the lanes both write these.
 */
export function corsHeaderPairs(origin: string, allowed: ReadonlySet<string>): readonly string[] {
  if (!allowed.has(origin.toLowerCase())) return [];
  return [
    'Access-Control-Allow-Origin',
    origin,
    'Access-Control-Allow-Credentials',
    'true',
    'Access-Control-Expose-Headers',
    CORS_EXPOSED_HEADERS,
  ];
}

/**
 * The headers every answer to a route carries before its own: CORS for an allowed `origin`, and the Vary
 * that CORS and the access check give it (varyOf).
 */
export function frameHeaders(origin: string, allowed: ReadonlySet<string>, credentialed: boolean): string[] {
  const vary = varyOf(origin !== '', credentialed);
  const pairs = origin === '' ? [] : [...corsHeaderPairs(origin, allowed)];
  if (vary !== undefined) pairs.push('Vary', vary);
  return pairs;
}

// ---- conditional GET and the answers kept by entity tag ------------------------------------------------

function opaque(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/**
 * RFC 9110 If-None-Match with weak comparison: true when the client holds the current representation. `*`
 * is left to namesWildcard: it holds only when the resource exists, which a tag alone cannot tell.
 */
export function noneMatchFails(ifNoneMatch: string, tag: string): boolean {
  if (ifNoneMatch === '') return false;
  if (ifNoneMatch === tag) return true;
  const current = opaque(tag);
  return ifNoneMatch.split(',').some((listed) => opaque(listed.trim()) === current);
}

/** If-None-Match: `*` (any current representation): answered 304 once the route has found one. */
export function namesWildcard(ifNoneMatch: string): boolean {
  return ifNoneMatch !== '' && ifNoneMatch.split(',').some((listed) => listed.trim() === '*');
}

/** How many answers a router keeps: one per polled (route, group) is plenty. */
export const CACHED_ANSWERS = 1000;

/** How long a request waits for an answer being built, and how many builds may run at once. */
export interface BuildBounds {
  /** ANSWER_WAIT_MS: past it the request gets 503 with Retry-After; the build goes on and fills the cache. */
  readonly waitMs: number;
  /** MAX_ANSWER_BUILDS: builds in flight across every router of an application; past it, 503 at once. */
  readonly maxBuilds: number;
}

export const defaultBuildBounds: BuildBounds = { waitMs: 2000, maxBuilds: 8 };

/** The builds in flight of one application, shared by its routers' caches (the global cap). */
export class BuildSlots {
  private inFlight = 0;

  constructor(readonly bounds: BuildBounds = defaultBuildBounds) {}

  get running(): number {
    return this.inFlight;
  }

  /** Takes a slot, or answers false when every one is taken. */
  take(): boolean {
    if (this.inFlight >= this.bounds.maxBuilds) return false;
    this.inFlight += 1;
    return true;
  }

  release(): void {
    this.inFlight -= 1;
  }
}

/**
 * Serialised answers of routes whose answer is a function of their entity tag alone, kept while the tag
 * holds: a poll of an unchanged group is answered without asking the store for the data or serialising it.
 * Least recently used answers go first.
 *
 * An answer slower to build than the request may wait (BuildBounds.waitMs) is not thrown away: the request
 * gets 503 with Retry-After and the build goes on, so the next request finds it kept. Otherwise an answer
 * that always takes longer than the deadline would never be built, and every poll would pay the deadline
 * again. Builds are bounded so they cannot pile up: one per tag, `maxBuilds` in all.
 */
export class AnswerCache {
  private readonly answers = new Map<string, string>();
  /** Answers being built: requests arriving meanwhile wait for the same one rather than building their own. */
  private readonly building = new Map<string, Promise<unknown>>();

  constructor(
    private readonly capacity = CACHED_ANSWERS,
    private readonly slots = new BuildSlots(),
  ) {}

  get(tag: string): string | undefined {
    const answer = this.answers.get(tag);
    if (answer !== undefined) {
      this.answers.delete(tag);
      this.answers.set(tag, answer);
    }
    return answer;
  }

  /**
   * The answer of `tag` when one is kept; else the outcome of `build`, shared by every request asking for
   * the tag while it runs (after a change, every poller of a group misses at once: one store query serves
   * them all, where a query each could swamp a slow store). A string outcome is kept. Rejects with
   * StoreUnavailableError (503, Retry-After) when the build is not done within the wait, or when no build
   * slot is free.
   */
  async answer<T>(tag: string, build: () => Promise<string | T>): Promise<string | T> {
    const kept = this.get(tag);
    if (kept !== undefined) return kept;
    let building = this.building.get(tag) as Promise<string | T> | undefined;
    if (building === undefined) {
      if (!this.slots.take()) throw busy('Too many answers are being prepared, try again shortly');
      building = build().then((outcome) => {
        if (typeof outcome === 'string') this.set(tag, outcome);
        return outcome;
      });
      this.building.set(tag, building);
      const done = (): void => {
        this.building.delete(tag);
        this.slots.release();
      };
      building.then(done, done);
    }
    return withinWait(building, this.slots.bounds.waitMs);
  }

  set(tag: string, answer: string): void {
    this.answers.delete(tag);
    this.answers.set(tag, answer);
    if (this.answers.size > this.capacity) {
      const [oldest] = this.answers.keys();
      if (oldest !== undefined) this.answers.delete(oldest);
    }
  }
}

function busy(message: string): StoreUnavailableError {
  return new StoreUnavailableError(message);
}

/**
 * The build's outcome if it comes within `waitMs`; the build itself is not stopped either way. One promise
 * and one timer a request: every poll of a changed group (and every full answer of a route not cached) comes
 * through here.
 */
function withinWait<T>(building: Promise<T>, waitMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreDeadlineError('answer', 'The answer is still being prepared, try again shortly')),
      waitMs,
    );
    building.then(
      (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // Passed on as the build rejected it, as Promise.race did.
        reject(error as Error);
      },
    );
  });
}
