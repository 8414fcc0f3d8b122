import { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { ANONYMOUS, type Logger } from '@hortus/core';
import { EdgeError, errorBody, routeErrorAnswer } from '../edge/errors.js';
import { type HostCheck } from '../edge/host.js';
import { parseJsonBody } from '../edge/json-body.js';
import { type HttpMetrics } from '../edge/metrics.js';
import { logRequest, requestIdOf } from '../edge/request.js';
import { securityHeaders } from '../edge/security.js';
import { admitByRate, type LaneLimits, textOf } from './admission.js';
import { type ClientFaultLog } from '../logger.js';
import { BOX_BODY_LIMIT_BYTES, BOX_ENDPOINT_PATH, boxEndpointRoutes } from '../routes/boxes.js';
import { errorPolicyOfRoute } from '../routes/router.js';
import { type HttpUseCases, type Reply, type RouteInput } from '../routes/routing.js';
import { validate } from '../routes/schemas.js';

export interface BoxLaneOptions extends LaneLimits {
  readonly useCases: HttpUseCases;
  readonly logger: Logger;
  /** Where request lines go; undefined when they are off. */
  readonly requestLogger: Logger | undefined;
  readonly metrics: HttpMetrics | undefined;
  readonly clientFaults: Pick<ClientFaultLog, 'warn'>;
  /** The edge's Host check; undefined: any host. */
  readonly checkHost: HostCheck | undefined;
  /** How long a body may take to arrive (BODY_TIMEOUT_MS), as the chain's body parser allows. */
  readonly bodyTimeoutMs: number;
}

const [route] = boxEndpointRoutes.routes;
/** The route pattern, as Koa's router names it in the metrics. */
const PATTERN = `${BOX_ENDPOINT_PATH}/action/:action`;
/** The firmware's request line: the endpoint's prefix in any case, then the action (letters only). */
const boxPath = new RegExp(`^${BOX_ENDPOINT_PATH}/action/([A-Za-z]+)$`, 'iu');
/** The two body types the endpoint reads, exactly, without parameters (a charset would change decoding). */
const bodyTypes = new Set(['application/ejson', 'application/json']);
const securityHeaderPairs = Object.entries(securityHeaders).flat();
const JSON_TYPE = ['Content-Type', 'application/json; charset=utf-8'];
const NO_QUERY: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Whether the chain would treat the request any differently from the firmware's: only then does it take
 * the long way. Anything a middleware reads (Origin and Fetch Metadata, a query, encodings, chunking, an
 * unusual type or size) sends it there; the lane never reads a body it might not answer.
 */
function plainBoxRequest(request: IncomingMessage): boolean {
  const { headers } = request;
  const length = headers['content-length'];
  return (
    request.method === 'POST' &&
    length !== undefined &&
    /^\d{1,6}$/u.test(length) &&
    Number(length) <= BOX_BODY_LIMIT_BYTES &&
    headers['transfer-encoding'] === undefined &&
    headers['content-encoding'] === undefined &&
    headers['expect'] === undefined &&
    headers.origin === undefined &&
    headers['sec-fetch-site'] === undefined &&
    bodyTypes.has((headers['content-type'] ?? '').toLowerCase())
  );
}

/**
 * The box lane: the firmware's insertOne/insertMany/find (POST /api/box/v1/action/...), a request on a new
 * TLS connection every few seconds per box, answered straight on Node's request without building a Koa
 * context and running the middleware chain, which cost about as much as the ingest itself. It takes only
 * requests the chain would treat exactly as it does (see plainBoxRequest), from a permitted Host (the edge's
 * check), with a rate-limit token (the edge's limiter); everything else goes to Koa untouched. From then on
 * it answers whatever the route answers, with the route's own validation and handler, the body parser's
 * errors and the edge's routeErrorAnswer, the same headers (request id, security headers), metrics and log
 * line: the differential test (box-lane.test.ts) holds it to Koa's answers. The route is open to any
 * caller (it checks the device's api-key), so access control adds nothing to its answers.
 */
export function boxLane(options: BoxLaneOptions, fallback: RequestListener): RequestListener {
  if (route === undefined) throw new Error('the box endpoint has no route');
  const { useCases, logger, requestLogger, metrics, checkHost, clientFaults } = options;
  const policy = {
    ...errorPolicyOfRoute(boxEndpointRoutes, route, undefined),
    bodyLimitBytes: BOX_BODY_LIMIT_BYTES,
  };
  const { style } = policy;

  /**
   * Bodies being read, each with its deadline: one sweep a few times a second instead of a timer per
   * request (a timer set and cleared per box request cost more than reading its body).
   */
  const reading = new Map<IncomingMessage, { readonly deadline: number; readonly expire: () => void }>();
  let sweeper: NodeJS.Timeout | undefined;
  const sweepSoon = (): void => {
    if (sweeper !== undefined) return;
    sweeper = setInterval(
      () => {
        const now = performance.now();
        for (const [request, { deadline, expire }] of reading) {
          if (deadline > now) continue;
          reading.delete(request);
          expire();
        }
        if (reading.size === 0) {
          clearInterval(sweeper);
          sweeper = undefined;
        }
      },
      Math.max(10, Math.min(250, options.bodyTimeoutMs / 4)),
    );
    sweeper.unref();
  };

  /** Reads and answers a request the lane has taken, with its token. */
  const respond = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    url: string,
    action: string,
    clientAddress: string,
  ): void => {
    const { headers } = request;
    const requestId = requestIdOf(textOf(headers['x-request-id']));
    let answered = false;
    const write = (reply: Reply, extra: readonly string[]): void => {
      if (answered) return;
      answered = true;
      const out: string[] = ['X-Request-Id', requestId, ...securityHeaderPairs, ...extra];
      let body: string | undefined;
      if ('json' in reply) {
        body = JSON.stringify(reply.json) ?? 'null';
        out.push(...JSON_TYPE);
      } else if ('text' in reply) {
        body = reply.text;
        out.push('Content-Type', 'text/plain; charset=utf-8');
      }
      if (body !== undefined) out.push('Content-Length', String(Buffer.byteLength(body)));
      response.writeHead(reply.status, out);
      response.end(body);
      metrics?.observeRequest('POST', PATTERN, reply.status, (performance.now() - started) / 1000);
      metrics?.boxLaneAnswered();
      logRequest(requestLogger, {
        requestId,
        method: 'POST',
        path: url,
        status: reply.status,
        started,
        keyId: undefined,
      });
    };
    const fault = (error: unknown): Record<string, unknown> => {
      const code = (error as { code?: unknown } | null)?.code;
      return {
        requestId,
        method: 'POST',
        path: url,
        error: error instanceof Error ? error.message : String(error),
        ...(typeof code === 'string' ? { code } : {}),
      };
    };
    /** Errors as the chain's error middleware answers them (edge/errors.ts). */
    const writeError = (error: unknown): void => {
      if (error instanceof EdgeError) {
        if (error.logged !== undefined) clientFaults.warn(error.logged, fault(error));
        write(
          errorBody(style, error.status, error.message),
          error.status === 408 ? ['Connection', 'close'] : [],
        );
      } else if (error instanceof SyntaxError && (error as { status?: unknown }).status === 400) {
        write(errorBody(style, 400, 'Request body is not valid JSON'), []);
      } else {
        const failed = { requestId, method: 'POST', path: url, route: PATTERN };
        const { reply, headers: extra } = routeErrorAnswer(error, policy, logger, failed, metrics);
        write(reply, extra);
      }
    };

    const chunks: Buffer[] = [];
    const expire = (): void => {
      request.removeAllListeners('data');
      request.resume();
      writeError(
        new EdgeError(
          408,
          `Request body was not received within ${options.bodyTimeoutMs} ms`,
          'request body timed out',
        ),
      );
    };
    reading.set(request, { deadline: started + options.bodyTimeoutMs, expire });
    sweepSoon();
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('error', (error) => {
      reading.delete(request);
      clientFaults.warn('malformed request', fault(error));
      write(errorBody(style, 400, 'Malformed request'), ['Connection', 'close']);
    });
    request.once('end', () => {
      reading.delete(request);
      if (answered) return;
      void answer(Buffer.concat(chunks).toString('utf8'));
    });

    const answer = async (text: string): Promise<void> => {
      try {
        // The chain's body reader drops a byte order mark before the JSON is parsed.
        const body = parseJsonBody(text.startsWith('\uFEFF') ? text.slice(1) : text);
        const params = { action };
        if (route.params !== undefined) validate(route.params, 'params', params);
        if (route.body !== undefined) validate(route.body, 'body', body);
        const input: RouteInput = {
          query: NO_QUERY,
          params,
          body: body as Record<string, unknown>,
          caller: ANONYMOUS,
          accessRequired: false,
          clientAddress,
          headers,
        };
        write(await route.handle(input, useCases), []);
      } catch (error) {
        writeError(error);
      }
    };
  };

  return (request, response) => {
    const started = performance.now();
    const url = request.url ?? '';
    const action = boxPath.exec(url)?.[1];
    if (
      action === undefined ||
      !plainBoxRequest(request) ||
      (checkHost !== undefined && !('allowed' in checkHost(request)))
    ) {
      fallback(request, response);
      return;
    }
    admitByRate(
      request,
      options,
      (clientAddress) => respond(request, response, started, url, action, clientAddress),
      () => fallback(request, response),
    );
  };
}
