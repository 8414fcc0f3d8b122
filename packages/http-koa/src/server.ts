import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type DemoSummary, SeedDemo } from '@hortus/core';
import { type Container } from 'inversify';
import { createApp } from './app.js';
import { type HttpConfig } from './config.js';
import {
  type ContainerOverrides,
  createContainer,
  HTTP_USE_CASES,
  STORE_HANDLE,
  type StoreHandle,
} from './container.js';
import { createJsonLogger, type Logger } from './logger.js';
import { type HttpUseCases } from './routing.js';

export interface StartOptions extends ContainerOverrides {
  /** Seed the demo greenhouse (core's SeedDemo) before listening. */
  readonly demo?: boolean;
  readonly logger?: Logger;
  /** A container built by the caller (tests seed through it); by default createContainer(config). */
  readonly container?: Container;
  /** How long close() lets in-flight requests finish before cutting connections. */
  readonly shutdownGraceMs?: number;
}

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  readonly server: Server;
  readonly demo?: DemoSummary;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), then closes the store. */
  close(): Promise<void>;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export async function startServer(config: HttpConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createJsonLogger();
  const container = options.container ?? createContainer(config, options);
  const store = container.get<StoreHandle>(STORE_HANDLE);
  try {
    await store.start();
    const demo = options.demo === true ? await container.get(SeedDemo).execute() : undefined;
    if (demo !== undefined) logger.info('demo seeded', { group: demo.group, readings: demo.readings });
    const app = createApp(container.get<HttpUseCases>(HTTP_USE_CASES), {
      logger,
      corsOrigins: config.corsOrigins,
      bodyLimitBytes: config.bodyLimitBytes,
    });
    const handle = app.callback();
    // Koa answers its own failures; the promise carries nothing left to handle.
    const server = createServer((request, response) => void handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const url = urlOf(server.address() as AddressInfo);
    logger.info('listening', { url, store: config.store });
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= shutDown(server, store, logger, options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS));
    return { url, server, close, ...(demo === undefined ? {} : { demo }) };
  } catch (error) {
    await store.close();
    throw error;
  }
}

function urlOf(address: AddressInfo): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  const host = wildcard ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

async function shutDown(server: Server, store: StoreHandle, logger: Logger, graceMs: number): Promise<void> {
  logger.info('shutting down', { graceMs });
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Idle keep-alive connections would hold close() open; busy ones finish their request first.
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearTimeout(grace);
  }
  await store.close();
  logger.info('stopped');
}
