import { auditRoutes } from './routes/audit.js';
import { type RequestListener } from 'node:http';
import Koa, { type Middleware } from 'koa';
import { type AccessControl } from './access/access.js';
import { accessRuleOf } from './exchange/access.js';
import { cors, requestLog } from './edge/request.js';
import { allowedOrigins, answering as newAnswering, type BuildBounds } from './exchange/answer.js';
import { boxLane } from './lane/box-lane.js';
import { pollLane } from './lane/poll-lane.js';
import { type TrustProxy } from './config.js';
import { errorMiddleware, unmatched } from './edge/errors.js';
import { EdgeError, isClientStreamError } from './exchange/errors.js';
import { type Logger } from '@hortus/core';
import { ClientFaultLog } from './logger.js';
import { type HttpMetrics, metricsMiddleware } from './edge/metrics.js';
import { operationsMiddleware, operationsRoutes } from './edge/operations.js';
import { PolicyTable } from './routes/policy.js';
import { buildOpenApiDocument, renderDocsPage } from './openapi/openapi.js';
import { type BodyParsers, buildRoutes } from './koa/router.js';
import { declaredRoutes } from './routes/declared.js';
import { type ErrorStyle, type HttpUseCases, type RouteSpec, type RouterSpec } from './routes/routing.js';
import { accountRouters } from './routes/accounts.js';
import { actionRoutes } from './routes/actions.js';
import { dataRoutes } from './routes/data.js';
import { deviceRoutes } from './routes/devices.js';
import { groupRoutes } from './routes/groups.js';
import { historyChartRoutes } from './routes/history-charts.js';
import { firmwareRoutes } from './routes/firmware.js';
import { metaRoutes } from './routes/meta.js';
import { notificationRoutes } from './routes/notifications.js';
import { userRoutes } from './routes/users.js';
import { clientAddressMiddleware, clientAddressOf } from './edge/client-address.js';
import { hostCheck, hostGuardMiddleware } from './edge/host.js';
import { DEFAULT_BODY_TIMEOUT_MS, jsonBodyParser } from './edge/json-body.js';
import { queryBoundMiddleware } from './edge/query.js';
import {
  RateLimiter,
  rateLimitMiddleware,
  type SharedRateLimit,
  sharedRateLimitMiddleware,
} from './edge/rate-limit.js';
import { adminRoutes } from './routes/admin.js';
import { alertSettingsRoutes } from './routes/alert-settings.js';
import { BOX_BODY_LIMIT_BYTES, type BoxRouteSettings, boxRouters } from './routes/boxes.js';
import {
  fetchMetadataMiddleware,
  securityHeadersMiddleware,
  writingHeadMiddleware,
} from './edge/security.js';
import { clientMiddleware, type ClientSettings } from './edge/client.js';
import { consoleMiddleware, type ConsoleSettings } from './edge/console.js';

export const apiRouters: readonly RouterSpec[] = [
  dataRoutes,
  actionRoutes,
  deviceRoutes,
  notificationRoutes,
  historyChartRoutes,
  groupRoutes,
  userRoutes,
  ...accountRouters,
  firmwareRoutes,
  adminRoutes,
  alertSettingsRoutes,
  auditRoutes,
];

export interface AppOptions {
  readonly logger: Logger;
  /** A line per request (the default), or none when false (LOG_REQUESTS=off). */
  readonly logRequests?: boolean;
  /** Exact origins allowed to call with credentials. */
  readonly corsOrigins: readonly string[];
  readonly bodyLimitBytes: number;
  /** The larger limit of POST /api/data/readings (batches of up to 5000 readings). */
  readonly ingestBodyLimitBytes: number;
  /** Access keys (401/403); without it every route is open. */
  readonly access?: AccessControl;
  readonly metrics?: HttpMetrics;
  /** Whether the store answers, for /readyz; without it the app counts as ready. */
  readonly ready?: () => Promise<boolean>;
  /** Requests per minute per client address; 0 or absent: no limit. */
  readonly rateLimitPerMinute?: number;
  /** The limit counted for every server together (RATE_LIMIT_REDIS_URL), instead of this process's buckets. */
  readonly sharedRateLimit?: SharedRateLimit;
  /** How the client address is taken from X-Forwarded-For (behind reverse proxies); none by default. */
  readonly trustProxy?: TrustProxy;
  /** Host names requests may name (DNS rebinding); absent or `['*']`: any. */
  readonly allowedHosts?: readonly string[];
  /** How long a request body may take to arrive; 30 s when absent. */
  readonly bodyTimeoutMs?: number;
  /** Where warnings about what clients send go, rate-limited; by default a ClientFaultLog on `logger`. */
  readonly clientFaults?: ClientFaultLog;
  /** A web client's build served under `/` (CLIENT_DIR); absent: `/` is the liveness text. */
  readonly client?: ClientSettings;
  /** The console's build, served under /console/; absent: no console. */
  readonly console?: ConsoleSettings;
  /** Whether polls are answered by the poll lane (lane/poll-lane.ts) in front of Koa; on unless false. */
  readonly pollLane?: boolean;
  /** Whether the box endpoint is answered by the box lane (lane/box-lane.ts) in front of Koa; as pollLane. */
  readonly boxLane?: boolean;
  /** How long requests wait for a cacheable answer being built, and how many builds run at once. */
  readonly answerBuilds?: BuildBounds;
  /** Where onboarding sends boxes (BOX_PUBLIC_HOST, HTTPS_PORT); the HTTPS port 8443 when absent. */
  readonly boxes?: BoxRouteSettings;
}

interface Description {
  readonly document: Record<string, unknown>;
  readonly page: string;
}

/** The OpenAPI document and its page are built once: the routes never change while running. */
let described: Description | undefined;
function description(): Description {
  if (described === undefined) {
    // Only the meta routes' declarations matter here, so their handlers' sources can be placeholders.
    const meta = metaRoutes(
      () => undefined,
      () => '',
    );
    const document = buildOpenApiDocument([meta, ...apiRouters, ...boxRouters({ httpsPort: 8443 })]);
    described = { document, page: renderDocsPage(document) };
  }
  return described;
}

/** The OpenAPI document the server answers at /api/openapi.json (for linters and client generators). */
export function openApiDocument(): Record<string, unknown> {
  return description().document;
}

/** The HTTP application: Koa for every route, with the poll lane in front of it unless turned off. */
export interface HttpApp {
  readonly koa: Koa;
  /** Node's request listener: the poll lane, handing the rest to Koa. */
  readonly handle: RequestListener;
}

/**
 * A box's body: the firmware sends application/ejson (extended JSON is JSON), other clients
 * application/json. Over the limit is a 400 naming it, as the box endpoint answers every refusal.
 */
function boxBodyParser(parse: Middleware): Middleware {
  return async (ctx, next) => {
    if (ctx.request.is('application/ejson')) ctx.req.headers['content-type'] = 'application/json';
    else if (ctx.request.is('application/json', '+json') === false) {
      throw new EdgeError(415, 'Content-Type must be application/json or application/ejson');
    }
    try {
      await parse(ctx, async () => undefined);
    } catch (error) {
      if ((error as { status?: unknown } | null)?.status !== 413) throw error;
      ctx.set('Connection', 'close');
      throw new EdgeError(400, `Request body is larger than ${BOX_BODY_LIMIT_BYTES} bytes`);
    }
    await next();
  };
}

/** Assembles the HTTP application on the given use cases; it does not listen. */
export function createApp(useCases: HttpUseCases, options: AppOptions): HttpApp {
  const app = new Koa();
  const trustProxy = options.trustProxy ?? { hops: 0 };
  app.proxy = 'proxies' in trustProxy || trustProxy.hops > 0;
  const clientFaults = options.clientFaults ?? new ClientFaultLog(options.logger);
  // Errors are answered and logged by errorMiddleware; Koa's own stderr printing would duplicate them.
  app.silent = true;
  app.on('error', (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    // A client that hangs up while its answer is written is its own business.
    if (isClientStreamError(error)) clientFaults.warn('client connection failed', { error: message });
    else options.logger.error('koa error', { error: message });
  });
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const jsonParser = (limitBytes: number): Middleware => jsonBodyParser(limitBytes, bodyTimeoutMs);
  const ingestParser = jsonParser(options.ingestBodyLimitBytes);
  const bodyParsers: BodyParsers = {
    default: { parse: jsonParser(options.bodyLimitBytes), limitBytes: options.bodyLimitBytes },
    ingest: {
      // Other routes take what deployed clients send; boxes posting readings must say it is JSON, or a
      // form-encoded `curl -d` would be read as an empty body and every reading silently "missing".
      parse: async (ctx, next) => {
        if (ctx.request.is('application/json', '+json') === false) {
          ctx.throw(415, 'Content-Type must be application/json');
        }
        await ingestParser(ctx, next);
      },
      limitBytes: options.ingestBodyLimitBytes,
    },
    box: { parse: boxBodyParser(jsonParser(BOX_BODY_LIMIT_BYTES)), limitBytes: BOX_BODY_LIMIT_BYTES },
  };
  const { document, page } = description();
  const routers = [
    metaRoutes(
      () => document,
      () => page,
    ),
    ...apiRouters,
    ...boxRouters(options.boxes ?? { httpsPort: 8443 }),
  ];

  // Every route's policy, checked here: a route that does not declare one stops the server from starting.
  const policies = new PolicyTable([...declaredRoutes(routers), ...operationsRoutes]);

  const requestLogger = options.logRequests === false ? undefined : options.logger;
  app.use(requestLog(requestLogger));
  if (options.metrics !== undefined) app.use(metricsMiddleware(options.metrics));
  app.use(securityHeadersMiddleware);
  if (app.proxy) app.use(clientAddressMiddleware(trustProxy));
  // One Host check for both paths; with TRUST_PROXY it also drops X-Forwarded-Host from untrusted peers.
  const hostGuarded = options.allowedHosts !== undefined && !options.allowedHosts.includes('*');
  const checkHost =
    hostGuarded || app.proxy
      ? hostCheck(hostGuarded ? (options.allowedHosts ?? []) : ['*'], trustProxy)
      : undefined;
  if (checkHost !== undefined) app.use(hostGuardMiddleware(checkHost));
  app.use(cors(options.corsOrigins));
  const perMinute = options.rateLimitPerMinute ?? 0;
  const shared = options.sharedRateLimit;
  const limiter = perMinute > 0 && shared === undefined ? new RateLimiter(perMinute) : undefined;
  if (limiter !== undefined) app.use(rateLimitMiddleware(limiter));
  if (shared !== undefined) app.use(sharedRateLimitMiddleware(shared));
  app.use(writingHeadMiddleware(policies));
  app.use(fetchMetadataMiddleware(options.corsOrigins, policies));
  app.use(errorMiddleware(options.logger, options.bodyLimitBytes, clientFaults, options.metrics));
  app.use(queryBoundMiddleware);
  // The client's files need no key: the page logs in, then its API requests carry the session cookie.
  const { access } = options;
  // Before the client's: its history fallback would answer /console/ with the client's page.
  if (options.console !== undefined) {
    app.use(
      consoleMiddleware(options.console, async () => (access === undefined ? false : access.required())),
    );
  }
  if (options.client !== undefined) app.use(clientMiddleware(options.client));
  if (access !== undefined) app.use(access.middleware(policies, options.corsOrigins));
  app.use(
    operationsMiddleware({
      ready: options.ready ?? (async () => true),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    }),
  );
  const guard =
    access === undefined
      ? undefined
      : (route: RouteSpec, fullPath: string, style: ErrorStyle) =>
          access.guard(accessRuleOf(route, fullPath), style);
  const answering = newAnswering(options.answerBuilds);
  app.use(buildRoutes(routers, useCases, bodyParsers, answering, guard));
  app.use(unmatched);
  const koaHandle = app.callback();
  const viaKoa: RequestListener = (request, response) => void koaHandle(request, response);
  const clientAddress = app.proxy ? clientAddressOf(trustProxy) : undefined;
  const viaBoxLane =
    (options.boxLane ?? options.pollLane) === false
      ? viaKoa
      : boxLane(
          {
            useCases,
            logger: options.logger,
            requestLogger,
            metrics: options.metrics,
            clientFaults,
            checkHost,
            clientAddress,
            limiter,
            shared,
            bodyTimeoutMs,
            proxy: app.proxy,
          },
          viaKoa,
        );
  if (options.pollLane === false) return { koa: app, handle: viaBoxLane };
  const handle = pollLane(
    {
      routers: apiRouters,
      useCases,
      answering,
      logger: options.logger,
      requestLogger,
      metrics: options.metrics,
      access,
      allowedOrigins: allowedOrigins(options.corsOrigins),
      checkHost,
      proxy: app.proxy,
      clientFaults,
      bodyLimitBytes: options.bodyLimitBytes,
      clientAddress,
      limiter,
      shared,
    },
    viaBoxLane,
  );
  return { koa: app, handle };
}
