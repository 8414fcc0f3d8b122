import {
  type HttpUseCases,
  type Reply,
  type RouteErrorPolicy,
  type RouteInput,
  type RouterSpec,
  type RouteSpec,
} from '../routes/routing.js';
import {
  AnswerCache,
  type BuildBounds,
  BuildSlots,
  CACHED_ANSWERS,
  namesWildcard,
  noneMatchFails,
} from './answer-cache.js';
import { cachingHeaders, type Outgoing, outgoingOf } from './outgoing.js';

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
