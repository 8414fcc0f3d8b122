import { type IncomingMessage, type RequestListener } from 'node:http';
import { ANONYMOUS } from '@hortus/core';
import { type AccessControl, type AccessRule, accessRuleOf, decideRoute } from '../access/access.js';
import { corsHeaderPairs, logRequest, requestIdOf } from '../edge/request.js';
import { type Logger } from '../logger.js';
import { type HttpMetrics } from '../edge/metrics.js';
import {
  answerOf,
  type Answering,
  type HttpUseCases,
  type RouteInput,
  type RouterSpec,
  type RouteSpec,
} from '../routes/routing.js';
import { type AnswerCache } from '../routes/conditional.js';
import { validate } from '../routes/schemas.js';
import { type RateLimiter, securityHeaders } from '../edge/security.js';

export interface PollLaneOptions {
  readonly routers: readonly RouterSpec[];
  readonly useCases: HttpUseCases;
  readonly answering: Answering;
  readonly logger: Logger;
  readonly metrics: HttpMetrics | undefined;
  readonly access: AccessControl | undefined;
  readonly allowedOrigins: ReadonlySet<string>;
  /** Whether a Host header may be served; undefined: any. */
  readonly hostAllowed: ((host: string) => boolean) | undefined;
  /** The client's address from the socket's and X-Forwarded-For; undefined: the socket's, as Koa reads it. */
  readonly clientAddress: ((socketAddress: string, forwardedFor: string) => string) | undefined;
  readonly limiter: RateLimiter | undefined;
  /** Requests whose rate-limit token the lane took before handing them to Koa: Koa must not take another. */
  readonly counted: WeakSet<IncomingMessage>;
}

interface LaneRoute {
  readonly spec: RouteSpec;
  /** The route pattern, as Koa's router names it in the metrics. */
  readonly pattern: string;
  readonly rule: AccessRule;
  readonly answers: AnswerCache;
}

/** Without access control every route is open and the caller anonymous. */
const OPEN = Object.freeze({ access: undefined, caller: ANONYMOUS });
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NO_BODY: Readonly<Record<string, unknown>> = Object.freeze({});
const securityHeaderPairs = Object.entries(securityHeaders).flat();

/** A header as one text (Node already joins repeated ones of most names). */
function textOf(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** A query of plain names and values only: nothing to decode, so it is split rather than parsed. */
const plainQuery = /^[\w.~-]+=[\w.~-]*(?:&[\w.~-]+=[\w.~-]*)*$/u;

/** The query as Koa parses it: a repeated name gives an array, `__proto__` is an ordinary name. */
function parseQuery(search: string): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (search === '') return query;
  const plain = plainQuery.test(search);
  const parameters = plain ? undefined : new URLSearchParams(search);
  const pairs = parameters ?? search.split('&').map((pair) => pair.split('=') as [string, string]);
  for (const [name, value] of pairs) {
    const held = Object.hasOwn(query, name) ? query[name] : undefined;
    const joined =
      held === undefined ? value : Array.isArray(held) ? [...(held as string[]), value] : [held, value];
    Object.defineProperty(query, name, {
      value: joined,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return query;
}

/**
 * The poll lane: the routes clients and boxes poll every few seconds (a group's actions, newest readings,
 * settings), answered straight on Node's request without building a Koa context and running the middleware
 * chain, which costs more than the poll itself. It answers only what it can answer exactly as the chain
 * would: a GET with a valid query, a permitted Host, access known without waiting and allowed, a rate-limit
 * token, and a route answering 304 or a 200 of JSON. Every other request, and any request whose route
 * fails, goes to Koa, which answers it as always. The answers carry the same headers (request id, security
 * headers, CORS, Vary, Cache-Control, ETag), count in the same metrics and write the same log line.
 */
export function pollLane(options: PollLaneOptions, fallback: RequestListener): RequestListener {
  const routes = new Map<string, LaneRoute>();
  for (const router of options.routers) {
    for (const spec of router.routes) {
      if (spec.method !== 'get' || spec.cacheByTag !== true || spec.entityTag === undefined) continue;
      if (spec.params !== undefined || spec.body !== undefined || spec.path.includes(':')) continue;
      const pattern = `${router.prefix}${spec.path}`;
      routes.set(pattern.toLowerCase(), {
        spec,
        pattern,
        rule: accessRuleOf(spec, pattern),
        answers: options.answering.cacheOf(router),
      });
    }
  }
  const { useCases, logger, metrics, access, limiter, counted } = options;
  // Nearly every request names the same host: its verdict is kept rather than worked out again.
  let lastHost: string | undefined;
  let lastHostAllowed = false;
  const hostAllowed = (host: string): boolean => {
    if (options.hostAllowed === undefined) return true;
    if (host !== lastHost) {
      lastHost = host;
      lastHostAllowed = options.hostAllowed(host);
    }
    return lastHostAllowed;
  };

  /** The route of a path, case-insensitively, with or without one trailing slash, as the routers match. */
  const routeOf = (path: string): LaneRoute | undefined => {
    const lower = path.toLowerCase();
    return routes.get(lower.endsWith('/') ? lower.slice(0, -1) : lower);
  };

  const valid = (spec: RouteSpec, query: Record<string, unknown>): boolean => {
    if (spec.query === undefined) return true;
    try {
      validate(spec.query, 'query', query);
      return true;
    } catch {
      return false;
    }
  };

  return (request, response) => {
    const started = performance.now();
    const { headers } = request;
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    const route = request.method === 'GET' ? routeOf(path) : undefined;
    // A GET with a body is unusual enough to take the long way, where body limits are enforced.
    if (
      route === undefined ||
      (headers['content-length'] !== undefined && headers['content-length'] !== '0') ||
      headers['transfer-encoding'] !== undefined ||
      !hostAllowed(headers.host ?? '') ||
      // Behind trusted proxies Koa reads the host from X-Forwarded-Host.
      (options.clientAddress !== undefined && headers['x-forwarded-host'] !== undefined)
    ) {
      fallback(request, response);
      return;
    }
    const ifNoneMatch = headers['if-none-match'] ?? '';
    const authorization = headers.authorization ?? '';
    const known = access === undefined ? OPEN : access.accessKnownNow(authorization, headers.cookie);
    const query = parseQuery(mark === -1 ? '' : url.slice(mark + 1));
    if (known === undefined || ifNoneMatch.includes('*') || !valid(route.spec, query)) {
      fallback(request, response);
      return;
    }
    if (!decideRoute(route.rule, known.access, { query, params: NO_PARAMS, body: NO_BODY }).allowed) {
      fallback(request, response);
      return;
    }
    const socketAddress = request.socket.remoteAddress ?? '';
    const clientAddress =
      options.clientAddress === undefined
        ? socketAddress
        : options.clientAddress(socketAddress, textOf(headers['x-forwarded-for']));
    // A refused take consumes nothing, so Koa takes again and answers the 429 itself.
    if (limiter !== undefined && !limiter.take(clientAddress).allowed) {
      fallback(request, response);
      return;
    }
    counted.add(request);
    const input: RouteInput = {
      query,
      params: NO_PARAMS,
      body: NO_BODY,
      caller: known.caller,
      accessRequired: known.access?.required === true,
      clientAddress,
    };
    const credentialed = known.access !== undefined && (known.access.required || authorization !== '');
    const pending = answerOf(route.spec, input, useCases, route.answers, ifNoneMatch);
    // What the lane does not write (an error, a reply other than a 200 of JSON) Koa writes, from this answer.
    const handOn = (): void => {
      options.answering.handedOn.set(request, { route: route.spec, answer: pending });
      fallback(request, response);
    };
    pending.then(
      (answer) => {
        if ('reply' in answer) {
          handOn();
          return;
        }
        const requestId = requestIdOf(textOf(headers['x-request-id']));
        const out: string[] = ['X-Request-Id', requestId, ...securityHeaderPairs];
        const origin = headers.origin ?? '';
        if (origin !== '') {
          out.push(...corsHeaderPairs(origin, options.allowedOrigins));
          // The access middleware adds Authorization and Cookie to the Vary that CORS began.
          out.push('Vary', credentialed ? 'Origin, Authorization, Cookie' : 'Origin');
        } else if (credentialed) {
          out.push('Vary', 'Authorization, Cookie, Origin');
        }
        out.push('ETag', answer.tag);
        let status: number;
        if ('notModified' in answer) {
          status = 304;
          if (credentialed) out.push('Cache-Control', 'private');
          response.writeHead(304, out);
          response.end();
        } else {
          status = 200;
          // What a credential unlocks is its holder's alone: shared caches must not keep it.
          out.push('Cache-Control', credentialed ? 'private, no-cache' : 'no-cache');
          out.push('Content-Type', 'application/json; charset=utf-8');
          out.push('Content-Length', String(Buffer.byteLength(answer.body)));
          response.writeHead(200, out);
          response.end(answer.body);
        }
        metrics?.observeRequest('GET', route.pattern, status, (performance.now() - started) / 1000);
        metrics?.pollLaneAnswered();
        logRequest(logger, { requestId, method: 'GET', path, status, started, keyId: known.access?.key?.id });
      },
      // The route failed (a missing group, an unreachable store): Koa answers it as it answers every error.
      handOn,
    );
  };
}
