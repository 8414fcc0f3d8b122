import { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { ANONYMOUS, type Logger } from '@hortus/core';
import { type AccessControl } from '../access/access.js';
import { type AccessRule, accessRuleOf, decideRoute } from '../access/route-rules.js';
import { routeErrorAnswer } from '../edge/errors.js';
import { corsHeaderPairs, logRequest, requestIdOf } from '../edge/request.js';
import { type HostCheck } from '../edge/host.js';
import { parseQuery, tooManyParameters } from '../edge/query.js';
import { type HttpMetrics } from '../edge/metrics.js';
import { answerOf, type Answering, errorPolicyOfRoute } from '../routes/router.js';
import {
  type HttpUseCases,
  type Reply,
  type RouteErrorPolicy,
  type RouteInput,
  type RouterSpec,
  type RouteSpec,
} from '../routes/routing.js';
import { type AnswerCache } from '../routes/conditional.js';
import { validate } from '../routes/schemas.js';
import { securityHeaders } from '../edge/security.js';
import { admitByRate, type LaneLimits, textOf } from './admission.js';

export interface PollLaneOptions extends LaneLimits {
  readonly routers: readonly RouterSpec[];
  readonly useCases: HttpUseCases;
  readonly answering: Answering;
  readonly logger: Logger;
  /** Where request lines go; undefined when they are off. */
  readonly requestLogger: Logger | undefined;
  readonly metrics: HttpMetrics | undefined;
  readonly access: AccessControl | undefined;
  readonly allowedOrigins: ReadonlySet<string>;
  /** The edge's Host check; undefined: any host. */
  readonly checkHost: HostCheck | undefined;
}

interface LaneRoute {
  readonly spec: RouteSpec;
  /** The route pattern, as Koa's router names it in the metrics. */
  readonly pattern: string;
  readonly rule: AccessRule;
  readonly answers: AnswerCache;
  readonly errorPolicy: RouteErrorPolicy;
}

/** Without access control every route is open and the caller anonymous. */
const OPEN = Object.freeze({ access: undefined, caller: ANONYMOUS });
/** Who calls and what they may do, as the access middleware would find it. */
type KnownAccess = NonNullable<ReturnType<AccessControl['accessKnownNow']>> | typeof OPEN;
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NO_BODY: Readonly<Record<string, unknown>> = Object.freeze({});
const securityHeaderPairs = Object.entries(securityHeaders).flat();
const JSON_TYPE = ['Content-Type', 'application/json; charset=utf-8'];
const TEXT_TYPE = ['Content-Type', 'text/plain; charset=utf-8'];

/**
 * The poll lane: the routes clients and boxes poll every few seconds (a group's actions, newest readings,
 * settings), answered straight on Node's request without building a Koa context and running the middleware
 * chain, which costs more than the poll itself. It answers only what it can answer exactly as the chain
 * would: a GET to a route whose answer depends only on its entity tag, with a valid query, a permitted Host
 * (the edge's check), access known without waiting and allowed, and a rate-limit token (the edge's limiter).
 * Once it has taken the token it answers whatever the route answers, errors too (the edge's
 * routeErrorAnswer). Every other request goes to Koa untouched. The answers carry the same headers (request
 * id, security headers, CORS, Vary, Cache-Control, ETag), count in the same metrics and write the same log
 * line as Koa's: the differential test (poll-lane.test.ts) holds them to it.
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
        errorPolicy: errorPolicyOfRoute(router, spec, undefined),
      });
    }
  }
  const { useCases, logger, requestLogger, metrics, access, checkHost } = options;
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

  /** Answers a request the lane has taken, with its token. */
  const respond = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    path: string,
    route: LaneRoute,
    known: KnownAccess,
    query: Record<string, unknown>,
    clientAddress: string,
    ifNoneMatch: string,
    authorization: string,
  ): void => {
    const { headers } = request;
    const input: RouteInput = {
      query,
      params: NO_PARAMS,
      body: NO_BODY,
      caller: known.caller,
      accessRequired: known.access?.required === true,
      clientAddress,
    };
    // As the access middleware: any credential sent (header or session cookie) makes the answer private.
    const credentialed =
      known.access !== undefined &&
      (known.access.required || authorization !== '' || known.access.session !== undefined);
    const requestId = requestIdOf(textOf(headers['x-request-id']));
    /** Writes the answer with the headers every answer of the chain carries, and counts and logs it. */
    const write = (status: number, extra: readonly string[], body: string | undefined): void => {
      const out: string[] = ['X-Request-Id', requestId, ...securityHeaderPairs];
      const origin = headers.origin ?? '';
      if (origin !== '') {
        out.push(...corsHeaderPairs(origin, options.allowedOrigins));
        // The access middleware adds Authorization and Cookie to the Vary that CORS began.
        out.push('Vary', credentialed ? 'Origin, Authorization, Cookie' : 'Origin');
      } else if (credentialed) {
        out.push('Vary', 'Authorization, Cookie, Origin');
      }
      out.push(...extra);
      if (body !== undefined) out.push('Content-Length', String(Buffer.byteLength(body)));
      response.writeHead(status, out);
      response.end(body);
      metrics?.observeRequest('GET', route.pattern, status, (performance.now() - started) / 1000);
      metrics?.pollLaneAnswered();
      logRequest(requestLogger, {
        requestId,
        method: 'GET',
        path,
        status,
        started,
        keyId: known.access?.key?.id,
      });
    };
    // What a credential unlocks is its holder's alone: shared caches must not keep it.
    const caching = (directive: string | undefined): string[] => {
      const value = credentialed
        ? directive === undefined
          ? 'private'
          : `private, ${directive}`
        : directive;
      return value === undefined ? [] : ['Cache-Control', value];
    };
    const writeReply = (reply: Reply, tag: string | undefined, extra: readonly string[]): void => {
      const tagged = tag !== undefined && reply.status === 200;
      const out = [...extra, ...(tagged ? ['ETag', tag] : []), ...caching(tagged ? 'no-cache' : undefined)];
      if ('json' in reply) {
        write(reply.status, [...out, ...JSON_TYPE], JSON.stringify(reply.json) ?? 'null');
      } else if ('text' in reply) {
        write(reply.status, [...out, ...TEXT_TYPE], reply.text);
      } else if ('empty' in reply) {
        write(reply.status, out, undefined);
      } else {
        // Polled routes answer JSON; a page or a download here is a mistake in the route, answered as one.
        writeError(new Error(`${route.pattern} answered other than JSON or text on the poll lane`));
      }
    };
    const writeError = (error: unknown): void => {
      const failed = { requestId, method: 'GET', path, route: route.pattern };
      const { reply, headers: extra } = routeErrorAnswer(error, route.errorPolicy, logger, failed, metrics);
      writeReply(reply, undefined, extra);
    };
    answerOf(route.spec, input, useCases, route.answers, ifNoneMatch).then((answer) => {
      if ('reply' in answer) writeReply(answer.reply, answer.tag, []);
      else if ('notModified' in answer) write(304, ['ETag', answer.tag, ...caching(undefined)], undefined);
      else write(200, ['ETag', answer.tag, ...caching('no-cache'), ...JSON_TYPE], answer.body);
    }, writeError);
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
      (checkHost !== undefined && !('allowed' in checkHost(request)))
    ) {
      fallback(request, response);
      return;
    }
    const ifNoneMatch = headers['if-none-match'] ?? '';
    const authorization = headers.authorization ?? '';
    const known = access === undefined ? OPEN : access.accessKnownNow(authorization, headers.cookie);
    const search = mark === -1 ? '' : url.slice(mark + 1);
    if (tooManyParameters(search)) {
      fallback(request, response);
      return;
    }
    const query = parseQuery(search);
    if (known === undefined || ifNoneMatch.includes('*') || !valid(route.spec, query)) {
      fallback(request, response);
      return;
    }
    if (!decideRoute(route.rule, known.access, { query, params: NO_PARAMS, body: NO_BODY }).allowed) {
      fallback(request, response);
      return;
    }
    admitByRate(
      request,
      options,
      (clientAddress) =>
        respond(
          request,
          response,
          started,
          path,
          route,
          known,
          query,
          clientAddress,
          ifNoneMatch,
          authorization,
        ),
      () => fallback(request, response),
    );
  };
}
