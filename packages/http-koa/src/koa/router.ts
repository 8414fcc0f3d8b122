import { Router } from '@koa/router';
import { ANONYMOUS, type Caller } from '@hortus/core';
import { type Middleware } from 'koa';
import { queryOf } from '../edge/query.js';
import { type Answering, answerOf, errorPolicyOfRoute, outgoingOfAnswer } from '../exchange/answer.js';
import { encryptedSocket, plainHostOf, routeInputOf, validateParts } from '../exchange/input.js';
import {
  type BodyKind,
  type ErrorStyle,
  type HttpUseCases,
  type RouteErrorPolicy,
  type RouterSpec,
  type RouteSpec,
} from '../routes/routing.js';
import { validatorFor } from '../routes/schemas.js';
import { writeOutgoing } from './send.js';

/**
 * Request bodies are read under one of three limits: the usual one, the larger one of reading batches, or
 * the small one of a box's requests (which may also be application/ejson).
 */
export interface BodyParser {
  readonly parse: Middleware;
  readonly limitBytes: number;
}

export type BodyParsers = Readonly<Record<BodyKind, BodyParser>>;

/** Middleware a route runs after its body is parsed and before it is validated (access checks). */
/** `style`: the route's error shape, which its 403 takes (docs/api.md, error shapes). */
export type RouteGuard = (route: RouteSpec, fullPath: string, style: ErrorStyle) => Middleware;

/**
 * One router of the Koa chain, built from its spec: each route's body parser, access guard and a handler
 * that reads the request into the exchange's terms and writes the exchange's answer.
 */
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
    const policy = errorPolicyOfRoute(spec, route, parser?.limitBytes);
    for (const schema of [route.query, route.params, route.body])
      if (schema !== undefined) validatorFor(schema);

    const declarePolicy: Middleware = async (ctx, next) => {
      (ctx.state as { errorPolicy?: RouteErrorPolicy }).errorPolicy = policy;
      await next();
    };
    const handle: Middleware = async (ctx) => {
      const parts = {
        query: { ...queryOf(ctx) },
        params: (ctx as unknown as { params?: Record<string, string> }).params ?? {},
        body: route.body === undefined ? {} : (ctx.request.body as unknown),
      };
      validateParts(route, parts);
      const state = ctx.state as { caller?: Caller; access?: { readonly required: boolean } };
      const who = { caller: state.caller ?? ANONYMOUS, accessRequired: state.access?.required === true };
      // Koa's own reading of an unusual Host (user info, an IPv6 literal), which the lanes leave to it.
      const { host, hostname, secure } =
        plainHostOf(ctx.headers, encryptedSocket(ctx.req.socket), ctx.app.proxy) ?? ctx;
      const input = routeInputOf(parts, who, {
        clientAddress: ctx.ip,
        headers: ctx.headers,
        host,
        hostname,
        secure,
      });
      const answer = await answerOf(route, input, useCases, answers, ctx.get('If-None-Match'));
      // Credentialed answers are made private by the access middleware, around every answer of the chain.
      writeOutgoing(ctx, outgoingOfAnswer(answer, secure, false));
    };
    const middleware = [
      declarePolicy,
      ...(parser === undefined ? [] : [parser.parse]),
      ...(guard === undefined ? [] : [guard(route, `${spec.prefix}${route.path}`, policy.style)]),
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
