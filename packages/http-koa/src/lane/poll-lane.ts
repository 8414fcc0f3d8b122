import { type RequestListener, type ServerResponse } from 'node:http';
import { ANONYMOUS, type Logger } from '@hortus/core';
import { type AccessControl } from '../access/access.js';
import { logRequest, requestIdOf } from '../edge/request.js';
import { type HostCheck } from '../edge/host.js';
import { parseQuery, tooManyParameters } from '../edge/query.js';
import { type HttpMetrics } from '../edge/metrics.js';
import {
  type AccessRule,
  accessRuleOf,
  answersToCredential,
  credentialSentIn,
  decideRoute,
} from '../exchange/access.js';
import {
  type AnswerCache,
  type Answering,
  answerOf,
  cachingHeaders,
  errorPolicyOfRoute,
  type Outgoing,
  outgoingOf,
  outgoingOfAnswer,
  frameHeaders,
} from '../exchange/answer.js';
import { errorAnswer, type ErrorContext } from '../exchange/errors.js';
import {
  encryptedSocket,
  plainHostOf,
  type RequestFacts,
  routeInputOf,
  validateParts,
} from '../exchange/input.js';
import {
  type HttpUseCases,
  type RouteErrorPolicy,
  type RouterSpec,
  type RouteSpec,
} from '../routes/routing.js';
import { admitByRate, clientAddressOf, type LaneLimits, textOf, writeOnResponse } from './admission.js';

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
  /** Whether a trusted proxy's X-Forwarded-Host and -Proto are read (TRUST_PROXY), as Koa's `app.proxy`. */
  readonly proxy: boolean;
  /** Where a client's faults are warned about, rate-limited. */
  readonly clientFaults: ErrorContext['clientFaults'];
  /** The server's body limit, as the chain's error answers name it. */
  readonly bodyLimitBytes: number;
}

interface LaneRoute {
  readonly spec: RouteSpec;
  /** The route pattern, as Koa's router names it in the metrics. */
  readonly pattern: string;
  readonly rule: AccessRule;
  readonly answers: AnswerCache;
  readonly errorPolicy: RouteErrorPolicy;
  /** What the access check asks of the route's path before routing (routes/policy.ts). */
  readonly check: 'open' | 'account' | 'key';
  /** Valid queries parsed before, by their text: pollers send the same few again and again. */
  readonly queries: Map<string, Readonly<Record<string, unknown>>>;
}

/**
 * The most parsed queries a route keeps; past it the route starts again with none (queries are the
 * client's to choose, the memory they hold is not).
 */
const KEPT_QUERIES = 256;

/** Without access control every route is open and the caller anonymous. */
const OPEN = Object.freeze({ access: undefined, caller: ANONYMOUS });
/** Who calls and what they may do, as the access middleware would find it. */
type KnownAccess = NonNullable<ReturnType<AccessControl['accessKnownNow']>> | typeof OPEN;
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NO_BODY: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * The poll lane: the routes clients and boxes poll every few seconds (a group's actions, newest readings,
 * settings), answered straight on Node's request without building a Koa context and running the middleware
 * chain, which costs more than the poll itself. It answers only what it can answer exactly as the chain
 * would: a GET to a route whose answer depends only on its entity tag, with a valid query, a permitted and
 * plainly written Host (the edge's check), access known without waiting and allowed, and a rate-limit token (the edge's limiter).
 * Once it has taken the token, the exchange decides the answer as it does for the chain (the route's input,
 * its answer, caching and Vary headers, its error answer); the lane only writes it. Every other request goes
 * to Koa untouched. The answers count in the same metrics and write the same log line as Koa's: the
 * differential test (poll-lane.test.ts) holds them to it.
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
        check: spec.access === 'open' || spec.access === 'account' ? spec.access : 'key',
        queries: new Map(),
      });
    }
  }
  const { useCases, logger, requestLogger, metrics, access, checkHost, proxy } = options;
  const errorContext = {
    logger,
    clientFaults: options.clientFaults,
    metrics,
    bodyLimitBytes: options.bodyLimitBytes,
  };
  /** The route of a path, case-insensitively, with or without one trailing slash, as the routers match. */
  const routeOf = (path: string): LaneRoute | undefined => {
    const lower = path.toLowerCase();
    return routes.get(lower.endsWith('/') ? lower.slice(0, -1) : lower);
  };

  /**
   * The route's query parsed and valid, else undefined (Koa answers it). A valid query is kept by its text,
   * frozen, since every request that sends the same text shares it.
   */
  const validQuery = (route: LaneRoute, search: string): Readonly<Record<string, unknown>> | undefined => {
    const kept = route.queries.get(search);
    if (kept !== undefined) return kept;
    if (tooManyParameters(search)) return undefined;
    const query = parseQuery(search);
    try {
      validateParts(route.spec, { query, params: NO_PARAMS, body: NO_BODY });
    } catch {
      return undefined;
    }
    if (route.queries.size >= KEPT_QUERIES) route.queries.clear();
    route.queries.set(search, Object.freeze(query));
    return query;
  };

  /** Answers a request the lane has taken, with its token: the exchange decides, the lane writes. */
  const respond = (
    response: ServerResponse,
    started: number,
    path: string,
    route: LaneRoute,
    known: KnownAccess,
    query: Record<string, unknown>,
    facts: RequestFacts,
    ifNoneMatch: string,
  ): void => {
    const { headers } = facts;
    const input = routeInputOf(
      { query, params: NO_PARAMS, body: NO_BODY },
      { caller: known.caller, accessRequired: known.access?.required === true },
      facts,
    );
    const credentialed =
      access !== undefined &&
      answersToCredential(route.check, known.access?.required === true, credentialSentIn(headers));
    const requestId = requestIdOf(textOf(headers['x-request-id']));
    const leading = frameHeaders(headers.origin ?? '', options.allowedOrigins, credentialed);
    /** Writes the answer, and counts and logs it as the chain does. */
    const write = (out: Outgoing): void => {
      if (!writeOnResponse(response, requestId, leading, out)) {
        // Polled routes answer JSON; a page or a download here is a mistake in the route, answered as one.
        writeError(new Error(`${route.pattern} answered other than JSON or text on the poll lane`));
        return;
      }
      metrics?.observeRequest('GET', route.pattern, out.status, (performance.now() - started) / 1000);
      metrics?.pollLaneAnswered();
      logRequest(requestLogger, {
        requestId,
        method: 'GET',
        path,
        status: out.status,
        started,
        keyId: known.access?.key?.id,
      });
    };
    const writeError = (error: unknown): void => {
      const failed = { requestId, method: 'GET', path, route: route.pattern };
      const context = { ...errorContext, policy: route.errorPolicy, request: failed };
      const { reply, headers: extra } = errorAnswer(error, context);
      write(
        outgoingOf(reply, facts.secure, [...extra, ...cachingHeaders(undefined, reply.status, credentialed)]),
      );
    };
    answerOf(route.spec, input, useCases, route.answers, ifNoneMatch).then(
      (answer) => write(outgoingOfAnswer(answer, facts.secure, credentialed)),
      writeError,
    );
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
    const known =
      access === undefined ? OPEN : access.accessKnownNow(headers.authorization ?? '', headers.cookie);
    const query =
      known === undefined || ifNoneMatch.includes('*')
        ? undefined
        : validQuery(route, mark === -1 ? '' : url.slice(mark + 1));
    if (query === undefined || known === undefined) {
      fallback(request, response);
      return;
    }
    const host = plainHostOf(headers, encryptedSocket(request.socket), proxy);
    if (
      host === undefined ||
      !decideRoute(route.rule, known.access, { query, params: NO_PARAMS, body: NO_BODY }).allowed
    ) {
      fallback(request, response);
      return;
    }
    const factsOf = (clientAddress: string): RequestFacts => ({ clientAddress, headers, ...host });
    // A count in this process is taken at once, without callbacks; a shared one is asked (admitByRate).
    if (options.shared === undefined) {
      const clientAddress = clientAddressOf(request, options);
      if (options.limiter !== undefined && !options.limiter.take(clientAddress).allowed) {
        fallback(request, response);
        return;
      }
      respond(response, started, path, route, known, query, factsOf(clientAddress), ifNoneMatch);
      return;
    }
    admitByRate(
      request,
      options,
      (clientAddress) =>
        respond(response, started, path, route, known, query, factsOf(clientAddress), ifNoneMatch),
      () => fallback(request, response),
    );
  };
}
