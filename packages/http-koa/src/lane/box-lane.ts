import { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { ANONYMOUS, type Logger } from '@hortus/core';
import { type HostCheck } from '../edge/host.js';
import { parseJsonBody } from '../edge/json-body.js';
import { type HttpMetrics } from '../edge/metrics.js';
import { logRequest, requestIdOf } from '../edge/request.js';
import { errorPolicyOfRoute, type Outgoing, outgoingOf } from '../exchange/answer.js';
import { EdgeError, errorAnswer, errorBody, faultFields } from '../exchange/errors.js';
import {
  encryptedSocket,
  plainHostOf,
  type RequestFacts,
  routeInputOf,
  validateParts,
} from '../exchange/input.js';
import { type ClientFaultLog } from '../logger.js';
import { BOX_BODY_LIMIT_BYTES, BOX_ENDPOINT_PATH, boxEndpointRoutes } from '../routes/boxes.js';
import { type HttpUseCases } from '../routes/routing.js';
import { admitByRate, type LaneLimits, textOf, writeOnResponse } from './admission.js';

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
  /** Whether a trusted proxy's X-Forwarded-Host and -Proto are read (TRUST_PROXY), as Koa's `app.proxy`. */
  readonly proxy: boolean;
}

const [route] = boxEndpointRoutes.routes;
/** The route pattern from the route table, as Koa's router names it in the metrics. */
const PATTERN = `${boxEndpointRoutes.prefix}${route?.path ?? ''}`;
/** The firmware's request line: the endpoint's prefix in any case, then the action (letters only). */
const boxPath = new RegExp(`^${BOX_ENDPOINT_PATH}/action/([A-Za-z]+)$`, 'iu');
/** The two body types the endpoint reads, exactly, without parameters (a charset would change decoding). */
const bodyTypes = new Set(['application/ejson', 'application/json']);
const NO_QUERY: Record<string, unknown> = Object.freeze({});

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
 * it answers whatever the route answers: the exchange decides (the route's input and validation, its
 * answer, the error answer of the body's and the route's failures) and the lane reads the body and writes
 * the answer, counted and logged as the chain's: the differential test (box-lane.test.ts) holds it to Koa's. The route is open to any
 * caller (it checks the device's api-key), so access control adds nothing to its answers.
 */
export function boxLane(options: BoxLaneOptions, fallback: RequestListener): RequestListener {
  if (route === undefined) throw new Error('the box endpoint has no route');
  const { useCases, logger, requestLogger, metrics, checkHost, clientFaults } = options;
  const policy = errorPolicyOfRoute(boxEndpointRoutes, route, BOX_BODY_LIMIT_BYTES);
  const errorContext = { policy, bodyLimitBytes: BOX_BODY_LIMIT_BYTES, logger, clientFaults, metrics };

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

  /** Reads and answers a request the lane has taken, with its token: the exchange decides, the lane writes. */
  const respond = (
    request: IncomingMessage,
    response: ServerResponse,
    started: number,
    url: string,
    action: string,
    facts: RequestFacts,
  ): void => {
    const requestId = requestIdOf(textOf(request.headers['x-request-id']));
    const failed = { requestId, method: 'POST', path: url, route: PATTERN };
    let answered = false;
    const write = (out: Outgoing): void => {
      if (answered) return;
      answered = true;
      if (!writeOnResponse(response, requestId, [], out)) {
        answered = false;
        writeError(new Error(`${PATTERN} answered other than JSON or text on the box lane`));
        return;
      }
      metrics?.observeRequest('POST', PATTERN, out.status, (performance.now() - started) / 1000);
      metrics?.boxLaneAnswered();
      logRequest(requestLogger, {
        requestId,
        method: 'POST',
        path: url,
        status: out.status,
        started,
        keyId: undefined,
      });
    };
    /** Errors as the chain answers them (exchange/errors.ts). */
    const writeError = (error: unknown): void => {
      const { reply, headers } = errorAnswer(error, { ...errorContext, request: failed });
      write(outgoingOf(reply, facts.secure, headers));
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
      clientFaults.warn('malformed request', faultFields(failed, error));
      write(
        outgoingOf(errorBody(policy.style, 400, 'Malformed request'), facts.secure, ['Connection', 'close']),
      );
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
        const parts = { query: NO_QUERY, params: { action }, body };
        validateParts(route, parts);
        const input = routeInputOf(parts, { caller: ANONYMOUS, accessRequired: false }, facts);
        write(outgoingOf(await route.handle(input, useCases), facts.secure));
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
    const host = plainHostOf(request.headers, encryptedSocket(request.socket), options.proxy);
    if (host === undefined) {
      fallback(request, response);
      return;
    }
    admitByRate(
      request,
      options,
      (clientAddress) =>
        respond(request, response, started, url, action, {
          clientAddress,
          headers: request.headers,
          ...host,
        }),
      () => fallback(request, response),
    );
  };
}
