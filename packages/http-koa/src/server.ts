import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  AutomationEngine,
  type DemoSummary,
  type ScheduledTask,
  SeedDemo,
  type TickResult,
} from '@hortus/core';
import { MqttBridge, redactUrl } from '@hortus/mqtt';
import { type Container } from 'inversify';
import { AccessControl } from './access.js';
import { createApp } from './app.js';
import { MQTT_RETRY_MS, MqttBridgeKeeper } from './background.js';
import { type HttpConfig } from './config.js';
import {
  type ContainerOverrides,
  createContainer,
  HTTP_LOGGER,
  HTTP_USE_CASES,
  STORE_HANDLE,
  type StoreHandle,
} from './container.js';
import { type Logger } from './logger.js';
import { HTTP_METRICS, type HttpMetrics } from './metrics.js';
import { type HttpUseCases } from './routing.js';

export interface StartOptions extends ContainerOverrides {
  /** Seed the demo greenhouse (core's SeedDemo) before listening. */
  readonly demo?: boolean;
  /**
   * A container built by the caller (tests seed through it); by default createContainer(config). Build it
   * with the same logger, so the scheduler and the MQTT bridge log where the server does.
   */
  readonly container?: Container;
  /** How long close() lets in-flight requests finish before cutting connections. */
  readonly shutdownGraceMs?: number;
  /** Pause between two attempts to start the MQTT bridge while the broker is unreachable. */
  readonly mqttRetryMs?: number;
}

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  readonly server: Server;
  readonly demo?: DemoSummary;
  /**
   * Stops accepting, lets in-flight requests finish (up to the grace period) while the automation engine
   * finishes its tick, stops the MQTT bridge (storing what it queued), then closes the store.
   */
  close(): Promise<void>;
}

/** What runs beside the HTTP server and must stop before the store closes. */
interface BackgroundWork {
  readonly engine?: ScheduledTask;
  readonly mqtt?: MqttBridgeKeeper;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

export async function startServer(config: HttpConfig, options: StartOptions = {}): Promise<RunningServer> {
  const container = options.container ?? createContainer(config, options);
  const logger = options.logger ?? container.get<Logger>(HTTP_LOGGER);
  const store = container.get<StoreHandle>(STORE_HANDLE);
  try {
    await store.start();
    const demo = options.demo === true ? await container.get(SeedDemo).execute() : undefined;
    if (demo !== undefined) logger.info('demo seeded', { group: demo.group, readings: demo.readings });
    const metrics = container.get<HttpMetrics>(HTTP_METRICS);
    const startBackground = prepareBackground(
      config,
      container,
      logger,
      options.mqttRetryMs ?? MQTT_RETRY_MS,
      metrics,
    );
    const app = createApp(container.get<HttpUseCases>(HTTP_USE_CASES), {
      logger,
      corsOrigins: config.corsOrigins,
      bodyLimitBytes: config.bodyLimitBytes,
      ingestBodyLimitBytes: config.ingestBodyLimitBytes,
      access: container.get(AccessControl),
      metrics,
      ready: () => store.ping(),
      rateLimitPerMinute: config.rateLimitPerMinute,
      trustProxy: config.trustProxy,
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
    logger.info('listening', {
      url,
      store: config.store,
      automations: config.automations,
      mqtt: config.mqtt === undefined ? 'off' : redactUrl(config.mqtt.url),
    });
    const background = startBackground();
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> =>
      (closing ??= shutDown(
        server,
        store,
        background,
        logger,
        options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS,
      ));
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

/**
 * Starts the automation engine (unless AUTOMATIONS=off) and, when MQTT_URL is set, the MQTT bridge. Both
 * are resolved before the server listens, so a wiring mistake fails the start instead of a running server.
 */
function prepareBackground(
  config: HttpConfig,
  container: Container,
  logger: Logger,
  mqttRetryMs: number,
  metrics: HttpMetrics,
): () => BackgroundWork {
  const engine = config.automations ? container.get(AutomationEngine) : undefined;
  const bridge = config.mqtt === undefined ? undefined : container.get(MqttBridge);
  if (bridge !== undefined) metrics.countMqttReadingsFrom(() => bridge.stats().accepted);
  return () => {
    const work: { engine?: ScheduledTask; mqtt?: MqttBridgeKeeper } = {};
    if (engine !== undefined) {
      work.engine = engine.start((result) => {
        metrics.automationTick(result);
        logTick(logger, result);
      });
      logger.info('automations started', { tickMs: config.automationTickMs });
    }
    if (bridge !== undefined) {
      work.mqtt = new MqttBridgeKeeper(bridge, logger, mqttRetryMs);
      work.mqtt.start();
    }
    return work;
  };
}

/** Quiet ticks are not logged: one line every few seconds saying "nothing happened" is noise. */
function logTick(logger: Logger, { switched, alerts }: TickResult): void {
  if (switched.length === 0 && alerts.length === 0) return;
  logger.info('automation tick', {
    switched: switched.map(({ group, object, value, previousValue, trigger, rule }) => ({
      group,
      object,
      value,
      previousValue,
      trigger,
      rule,
    })),
    alerts: alerts.map(({ group, topic, message }) => ({
      group,
      ...(topic === undefined ? {} : { topic }),
      message,
    })),
  });
}

async function shutDown(
  server: Server,
  store: StoreHandle,
  background: BackgroundWork,
  logger: Logger,
  graceMs: number,
): Promise<void> {
  logger.info('shutting down', { graceMs });
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Idle keep-alive connections would hold close() open; busy ones finish their request first.
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    // The engine's tick in progress finishes while requests drain; both need the store.
    await Promise.all([closed, background.engine?.stop()]);
  } finally {
    clearTimeout(grace);
  }
  if (background.engine !== undefined) logger.info('automations stopped');
  // After the requests: a change they made is still published; what the bridge queued is stored.
  await background.mqtt?.stop();
  await store.close();
  logger.info('stopped');
  // The request log is written in batches: nothing it holds may be lost once close() has resolved.
  logger.flush?.();
}
