import { Router } from '@koa/router';
import { ANONYMOUS, type Caller } from '@hortus/core';
import { type Middleware } from 'koa';
import { queryOf } from '../edge/query.js';
import {
  AnswerCache,
  type BuildBounds,
  BuildSlots,
  CACHED_ANSWERS,
  namesWildcard,
  noneMatchFails,
} from './conditional.js';
import { type DeclaredRoute, policyProblem } from './policy.js';
import {
  type BodyParser,
  type BodyParsers,
  type HttpUseCases,
  type Reply,
  type RouteErrorPolicy,
  type RouteGuard,
  type RouteInput,
  type RouterSpec,
  type RouteSpec,
  send,
} from './routing.js';
import { validate, validatorFor } from './schemas.js';

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

/** Per application, never shared: each router's cache of serialised answers (see AnswerCache). */
export interface Answering {
  readonly cacheOf: (spec: RouterSpec) => AnswerCache;
}

/** How a route's errors are written: its router's style with its own changes, and its body limit. */
export function errorPolicyOfRoute(
  spec: RouterSpec,
  route: RouteSpec,
  parser: BodyParser | undefined,
): RouteErrorPolicy {
  return {
    style: { ...spec.style, ...route.style },
    statusFor: route.statusFor ?? {},
    ...(parser === undefined ? {} : { bodyLimitBytes: parser.limitBytes }),
  };
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

/** Every route of the routers with its full path, after checking that each declares its policy. */
export function declaredRoutes(specs: readonly RouterSpec[]): DeclaredRoute[] {
  return specs.flatMap((spec) =>
    spec.routes.map((route) => {
      const problem = policyProblem(route);
      if (problem !== undefined) throw new Error(`Route ${spec.prefix}: ${problem}`);
      return {
        method: route.method,
        path: `${spec.prefix}${route.path}`,
        access: route.access,
        writes: route.writes,
      };
    }),
  );
}

export function buildRouter(
  spec: RouterSpec,
  useCases: HttpUseCases,
  bodyParsers: BodyParsers,
  answering: Answering,
  guard?: RouteGuard,
): Router {
  const answers = answering.cacheOf(spec);
  const router = new Router({ prefix: spec.prefix });
  for (const route of spec.routes) {
    const parser = route.body === undefined ? undefined : bodyParsers[route.bodyKind ?? 'default'];
    const policy = errorPolicyOfRoute(spec, route, parser);
    for (const schema of [route.query, route.params, route.body])
      if (schema !== undefined) validatorFor(schema);

    const declarePolicy: Middleware = async (ctx, next) => {
      (ctx.state as { errorPolicy?: RouteErrorPolicy }).errorPolicy = policy;
      await next();
    };
    const handle: Middleware = async (ctx) => {
      const query: Record<string, unknown> = { ...queryOf(ctx) };
      const params = (ctx as unknown as { params?: Record<string, string> }).params ?? {};
      const body: unknown = route.body === undefined ? {} : ctx.request.body;
      if (route.params !== undefined) validate(route.params, 'params', params);
      if (route.query !== undefined) validate(route.query, 'query', query);
      if (route.body !== undefined) validate(route.body, 'body', body);
      const state = ctx.state as { caller?: Caller; access?: { readonly required: boolean } };
      const input: RouteInput = {
        query,
        params,
        body: body as Record<string, unknown>,
        caller: state.caller ?? ANONYMOUS,
        accessRequired: state.access?.required === true,
        clientAddress: ctx.ip,
        headers: ctx.headers,
        hostname: ctx.hostname,
        host: ctx.host,
        secure: ctx.secure,
      };
      const answer = await answerOf(route, input, useCases, answers, ctx.get('If-None-Match'));
      if ('notModified' in answer) {
        ctx.set('ETag', answer.tag);
        ctx.status = 304;
        return;
      }
      if ('body' in answer) {
        ctx.status = 200;
        ctx.type = 'application/json';
        ctx.body = answer.body;
      } else {
        send(ctx, answer.reply);
      }
      const { tag } = answer;
      if (tag !== undefined && ctx.status === 200) {
        ctx.set('ETag', tag);
        // Browsers then revalidate every poll, sending If-None-Match by themselves.
        ctx.set('Cache-Control', 'no-cache');
      }
    };
    const middleware = [
      declarePolicy,
      ...(parser === undefined ? [] : [parser.parse]),
      ...(guard === undefined ? [] : [guard(route, `${spec.prefix}${route.path}`)]),
      handle,
    ];
    router.register(route.path, [route.method.toUpperCase()], middleware);
  }
  return router;
}

/**
 * The routers of several specs as one middleware, answering exactly as `app.use` of each router in turn, but
 * a request only visits the routers that can match it: the unprefixed ones and the one whose prefix starts
 * its path (prefixes never nest). Matching a path against every route of every router before it would cost
 * a route near the end of the list several times what its handler does.
 */
export function buildRoutes(
  specs: readonly RouterSpec[],
  useCases: HttpUseCases,
  bodyParsers: BodyParsers,
  answering: Answering,
  guard?: RouteGuard,
): Middleware {
  const routers = specs.map((spec) => ({
    prefix: spec.prefix.toLowerCase(),
    middleware: buildRouter(spec, useCases, bodyParsers, answering, guard).routes() as unknown as Middleware,
  }));
  return (ctx, next) => {
    // Paths match case-insensitively, with or without a trailing slash.
    const path = ctx.path.toLowerCase();
    const chain = routers.filter(
      ({ prefix }) => prefix === '' || path === prefix || path.startsWith(`${prefix}/`),
    );
    const run = (index: number): Promise<unknown> => {
      const router = chain[index];
      return router === undefined ? next() : router.middleware(ctx, () => run(index + 1));
    };
    return run(0);
  };
}
