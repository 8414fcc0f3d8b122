import { STORE_LIFECYCLE, type StoreLifecycle } from '@hortus/core';
import {
  AccessControl,
  HTTP_SETTINGS,
  HTTP_USE_CASES,
  HttpMetrics,
  HttpServer,
  type HttpSettings,
} from '@hortus/http-koa';
import { type IncomingHttpHeaders, request } from 'node:http';
import { CapturingLogger, type TestServer } from './harness.js';

/**
 * The lanes (poll and box) answer in front of Koa, and whatever they answer must be exactly what Koa would.
 * Their tests send each request to the server as configured and to a twin on the same store and access
 * control with the lanes turned off, and compare the answers, the request lines and the metrics.
 */

export interface Seen {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface LaneTwin {
  readonly url: string;
  readonly logger: CapturingLogger;
  readonly metrics: HttpMetrics;
  /** The metrics of the server under test, where its lane counts what it answered. */
  readonly laneMetrics: HttpMetrics;
  close(): Promise<void>;
}

/** A second HTTP server on `api`'s container (same store, access control, settings) without the lanes. */
export async function startLaneTwin(api: TestServer): Promise<LaneTwin> {
  const { container } = api;
  const logger = new CapturingLogger();
  const metrics = new HttpMetrics();
  const twin = new HttpServer(
    container.get(HTTP_USE_CASES),
    { ...container.get<HttpSettings>(HTTP_SETTINGS), port: 0, pollLane: false },
    logger,
    container.get(AccessControl),
    metrics,
    container.get<StoreLifecycle>(STORE_LIFECYCLE),
  );
  const url = await twin.listen();
  return {
    url,
    logger,
    metrics,
    laneMetrics: container.get(HttpServer).metrics,
    close: () => twin.close(100),
  };
}

interface Sending {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Headers left out of the comparison besides the date and keep-alive, which differ between any two answers. */
  readonly alsoVarying?: readonly string[];
  /** A fresh connection for the request (as a box opens), instead of the shared keep-alive agent. */
  readonly ownConnection?: boolean;
}

/** Node's client, not fetch: it sends the headers (a Host header too) exactly as given. */
export function see(url: string, path: string, sending: Sending = {}): Promise<Seen> {
  const { method = 'GET', headers = {}, body, alsoVarying = [], ownConnection = false } = sending;
  const varying = new Set(['date', 'keep-alive', ...alsoVarying]);
  return new Promise((resolve, reject) => {
    const sent = request(
      `${url}${path}`,
      { method, headers, ...(ownConnection ? { agent: false } : {}) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: comparable(response.headers, headers, varying),
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

function comparable(
  received: IncomingHttpHeaders,
  sent: Record<string, string>,
  varying: ReadonlySet<string>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, given] of Object.entries(received)) {
    const value = Array.isArray(given) ? given.join(', ') : (given ?? '');
    if (varying.has(name)) continue;
    if (name === 'x-request-id' && sent['x-request-id'] === undefined) {
      kept[name] = /^[\da-f-]{36}$/u.test(value) ? '(generated)' : value;
    } else {
      kept[name] = value;
    }
  }
  return kept;
}

/** How many requests a lane has answered, from its own counter. */
export function laneAnswers(metrics: HttpMetrics, lane: 'poll' | 'box'): number {
  const line = metrics
    .render()
    .split('\n')
    .find((text) => text.startsWith(`hortus_${lane}_lane_answers_total `));
  return Number(line?.split(' ')[1]);
}

/** The request lines of a log, without what differs between any two servers (time, ids). */
export function requestLines(logger: CapturingLogger): unknown[] {
  return logger.lines
    .filter(({ event }) => event === 'request')
    .map(({ method, path, status, keyId }) => ({ method, path, status, keyId }));
}

/** The request counters of the routes `route` matches, as rendered. */
export function requestSeries(metrics: HttpMetrics, route: RegExp): string[] {
  return metrics
    .render()
    .split('\n')
    .filter((line) => line.startsWith('http_requests_total{') && route.test(line));
}
