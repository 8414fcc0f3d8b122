import {
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  ApplyRetention,
  CLOCK,
  type Clock,
  Authenticate,
  AutomationEngine,
  DeliverAlertMessages,
  type DeliveryRound,
  type OutboxMessage,
  SCHEDULER,
  type Scheduler,
  type DemoSummary,
  isDomainError,
  LOGGER,
  type Logger,
  type ScheduledTask,
  SeedDemo,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  type TickResult,
  redactUrl,
} from '@hortus/core';
import { HttpServer, HttpsListener } from '@hortus/http-koa';
import { MqttBridge } from '@hortus/mqtt';
import { existsSync } from 'node:fs';
import { type Server } from 'node:http';
import { join } from 'node:path';
import { type Server as SecureServer } from 'node:https';
import { type AddressInfo } from 'node:net';
import { type Container } from 'inversify';
import { BackupJob } from './backups.js';
import { type StartedRateLimit, startSharedRateLimit } from './shared-rate-limit.js';
import { MQTT_RETRY_MS, MqttBridgeKeeper, RetentionJob, startAlertDelivery } from './background.js';
import { type AppConfig } from './config.js';
import { accessState, isLoopback, listeningAddresses, OPEN_TO_NETWORK } from './exposure.js';
import { type ContainerOverrides, createContainer } from './container.js';
import { loadCertificate } from './tls.js';

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
  /** When the first retention pass begins after the start (tests make it sooner). */
  readonly retentionFirstRunMs?: number;
}

export interface RunningServer {
  /** Where the server listens, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  readonly server: Server;
  /** Where HTTPS is served when TLS is configured, e.g. https://127.0.0.1:8443 */
  readonly httpsUrl?: string;
  readonly httpsServer?: SecureServer;
  readonly demo?: DemoSummary;
  /**
   * Reads the certificate again (SIGHUP) and uses it for new connections; open ones keep theirs. Resolves
   * with its fingerprint; rejects, keeping the certificate in use, when the new one cannot be used.
   * Undefined without TLS.
   */
  reloadCertificate(): Promise<string | undefined>;
  /**
   * Stops accepting, lets in-flight requests finish (up to the grace period) while the automation engine
   * finishes its tick, stops the MQTT bridge (storing what it queued), then closes the store.
   */
  close(): Promise<void>;
}

/** What runs beside the HTTP server and must stop before the store closes. */
interface BackgroundWork {
  readonly engine?: ScheduledTask;
  readonly delivery?: ScheduledTask;
  readonly mqtt?: MqttBridgeKeeper;
  readonly retention: RetentionJob;
  readonly backups?: BackupJob;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/**
 * Starts the application: the store, the demo when asked, the HTTP server, then the automation engine and
 * the MQTT bridge. Its close() stops them in the reverse order.
 */
export async function startServer(config: AppConfig, options: StartOptions = {}): Promise<RunningServer> {
  const container = options.container ?? (await createContainer(config, options));
  const logger = options.logger ?? container.get<Logger>(LOGGER);
  const store = container.get<StoreLifecycle>(STORE_LIFECYCLE);
  let sharedLimit: StartedRateLimit | undefined;
  try {
    await store.start();
    for (const message of store.startWarnings?.() ?? [])
      logger.warn('data files readable by others', { message });
    for (const note of (await store.prepareToServe?.()) ?? []) logger[note.level](note.event, note.fields);
    const demo = options.demo === true ? await container.get(SeedDemo).execute() : undefined;
    if (demo !== undefined) {
      const event = demo.created.length === 0 ? 'demo already there' : 'demo seeded';
      logger.info(event, { group: demo.group, readings: demo.readings });
    }
    sharedLimit = await startSharedRateLimit(config, container, logger);
    const http = container.get(HttpServer);
    const startBackground = prepareBackground(config, container, logger, options);
    const secure = await startHttps(config, http, logger);
    if (secure !== undefined) http.useHttpsPort(Number(new URL(secure.url).port));
    let url: string;
    try {
      url = await http.listen();
    } catch (error) {
      await secure?.listener.close(0);
      throw error;
    }
    const addresses = listeningAddresses(config.host, (http.server.address() as AddressInfo).port);
    if (secure !== undefined) {
      addresses.push(...listeningAddresses(config.host, Number(new URL(secure.url).port), 'https'));
    }
    // A store that cannot say whether keys exist must not stop the start: the requests will find out.
    const keysInUse = await container
      .get(Authenticate)
      .keysInUse()
      .catch(() => undefined);
    const access = accessState(config.auth, keysInUse);
    logger.info('listening', {
      url,
      ...(config.console === undefined ? {} : { console: `${url}/console/` }),
      ...(secure === undefined ? {} : { httpsUrl: secure.url }),
      addresses,
      accessControl: access.on ? 'on' : 'off',
      accessReason: access.reason,
      store: config.store,
      automations: config.automations,
      mqtt: config.mqtt === undefined ? 'off' : redactUrl(config.mqtt.url),
    });
    if (config.console !== undefined && !existsSync(join(config.console.dir, 'index.html'))) {
      logger.warn('console not built', {
        dir: config.console.dir,
        message: 'run pnpm install or pnpm build',
      });
    }
    if (!access.on && !isLoopback(config.host)) {
      logger.warn('open to the network without access control', {
        host: config.host,
        addresses,
        message: OPEN_TO_NETWORK,
      });
    }
    const background = startBackground(http);
    let closing: Promise<void> | undefined;
    const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    const close = (): Promise<void> =>
      (closing ??= shutDown(http, secure?.listener, store, background, logger, graceMs, sharedLimit));
    return {
      url,
      server: http.server,
      close,
      reloadCertificate: async () => secure?.reload(),
      ...(secure === undefined ? {} : { httpsUrl: secure.url, httpsServer: secure.listener.server }),
      ...(demo === undefined ? {} : { demo }),
    };
  } catch (error) {
    sharedLimit?.close();
    await store.close();
    throw error;
  }
}

/**
 * With TLS configured, the same application over HTTPS on its own port: the certificate is loaded (or
 * created, for TLS=self-signed) and its fingerprint logged, so an operator can compare it with what a
 * client is shown.
 */
async function startHttps(
  config: AppConfig,
  http: HttpServer,
  logger: Logger,
): Promise<{ listener: HttpsListener; url: string; reload(): Promise<string> } | undefined> {
  const tls = config.tls;
  if (tls === undefined || tls.mode === 'off') return undefined;
  const dataDir = config.dataDir ?? './data';
  const certificate = await loadCertificate(tls, dataDir);
  logger.info(certificate.created ? 'self-signed certificate created' : 'certificate loaded', {
    file: certificate.source,
    fingerprint: certificate.fingerprint,
  });
  const listener = new HttpsListener(http.handle, config, certificate, http.clientFaults);
  const url = await listener.listen(config.httpsPort, config.host);
  return {
    listener,
    url,
    reload: async () => {
      const renewed = await loadCertificate(tls, dataDir);
      listener.replaceCertificate(renewed);
      logger.info('certificate reloaded', { file: renewed.source, fingerprint: renewed.fingerprint });
      return renewed.fingerprint;
    },
  };
}

/**
 * Starts the automation engine (unless AUTOMATIONS=off) and, when MQTT_URL is set, the MQTT bridge. Both
 * are resolved before the server listens, so a wiring mistake fails the start instead of a running server.
 */
function prepareBackground(
  config: AppConfig,
  container: Container,
  logger: Logger,
  options: StartOptions,
): (http: HttpServer) => BackgroundWork {
  const engine = config.automations ? container.get(AutomationEngine) : undefined;
  // The outbox is worked wherever the engine runs; the store's leases keep servers from sending one twice.
  const delivery = config.automations ? container.get(DeliverAlertMessages) : undefined;
  const scheduler = container.get<Scheduler>(SCHEDULER);
  const bridge = config.mqtt === undefined ? undefined : container.get(MqttBridge);
  const retention = new RetentionJob(container.get(ApplyRetention), logger);
  const backups = scheduledBackups(config, container.get<StoreLifecycle>(STORE_LIFECYCLE), logger);
  const outbox = container.get<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY);
  const clock = container.get<Clock>(CLOCK);
  return ({ metrics }) => {
    if (bridge !== undefined) {
      metrics.countMqttReadingsFrom(() => bridge.stats().accepted);
      metrics.countMqttDropsFrom(() => bridge.stats());
      metrics.watchMqttConnection(() => bridge.connected);
    }
    // The store's count, so every server shows the same depth, whichever of them sends.
    metrics.countOutboxFrom(() => outbox.countPending(clock.now()));
    // Every server runs it: passes of several servers only find less to delete.
    retention.start(options.retentionFirstRunMs);
    const work: {
      engine?: ScheduledTask;
      delivery?: ScheduledTask;
      mqtt?: MqttBridgeKeeper;
      retention: RetentionJob;
      backups?: BackupJob;
    } = { retention };
    if (backups !== undefined) {
      metrics.watchBackups(() => backups.newestAgeSeconds());
      backups.start(scheduler);
      work.backups = backups;
    }
    if (engine !== undefined) {
      work.engine = engine.start((result, seconds) => {
        metrics.automationTick(result, seconds);
        logTick(logger, result);
      });
      logger.info('automations started', {
        tickMs: config.automationTickMs,
        // The zones time rules and box stamps are read in (both Europe/Berlin unless configured).
        timeZone: config.timeZone,
        boxTimeZone: config.boxes.timeZone,
        // What this version changes for an installation that ran an older one (CHANGELOG, Unreleased).
        safeMode:
          'an action whose sensor rules read only stale topics (no reading for 10 minutes, or 3 of their usual ' +
          'intervals) is switched to its safe state once: off, hold for ventilator_*; see hortus action safety',
        boxRelays: "find answers off for each of a box's relay objects its group has no action of",
      });
    }
    if (delivery !== undefined) {
      work.delivery = startAlertDelivery(
        scheduler,
        delivery,
        logger,
        config.alertDeliveryMs ?? 5000,
        (round) => {
          metrics.deliveryRound(round);
          logDelivery(logger, round);
        },
      );
    }
    if (bridge !== undefined) {
      work.mqtt = new MqttBridgeKeeper(bridge, logger, options.mqttRetryMs ?? MQTT_RETRY_MS);
      work.mqtt.start();
    }
    return work;
  };
}

/** The backup job when BACKUP_DIR is set and the store can make online copies; a warning otherwise. */
function scheduledBackups(config: AppConfig, store: StoreLifecycle, logger: Logger): BackupJob | undefined {
  if (config.backups === undefined) return undefined;
  const backup = store.backup?.bind(store);
  if (backup === undefined) {
    logger.warn('scheduled backups do not apply to this store', {
      store: config.store,
      dir: config.backups.dir,
      hint: config.store === 'mongodb' ? 'back MongoDB up with mongodump' : 'the memory store has no file',
    });
    return undefined;
  }
  return new BackupJob(backup, config.backups, logger);
}

/** Where a message went, without a webhook URL's path or query (they often hold its token). */
function destination(message: OutboxMessage): Record<string, string> {
  const { channel } = message;
  return channel.type === 'email' ? { to: channel.to } : { webhook: redactUrl(channel.url) };
}

function logDelivery(logger: Logger, { delivered, retrying, failed }: DeliveryRound): void {
  for (const message of delivered) {
    logger.info('alert delivered', {
      group: message.group,
      alertEvent: message.event,
      attempts: message.attempts,
      ...destination(message),
    });
  }
  for (const { message, error } of retrying) {
    logger.warn('alert delivery failed, will retry', {
      group: message.group,
      alertEvent: message.event,
      attempts: message.attempts,
      error,
      ...destination(message),
    });
  }
  for (const { message, error } of failed) {
    logger.error('alert delivery given up', {
      group: message.group,
      alertEvent: message.event,
      attempts: message.attempts,
      error,
      ...destination(message),
    });
  }
}

/**
 * Quiet ticks are not logged: one line every few seconds saying "nothing happened" is noise. A group that
 * failed gets a line of its own: a warning for a domain error (the store is away), an error otherwise.
 */
function logTick(logger: Logger, { switched, alerts, withheld, failures, blocked }: TickResult): void {
  // Each once per reason (the engine keeps what it reported), not on every tick.
  for (const { group, object, by, reason } of blocked) {
    logger.info('automation blocked by lockout', { group, object, value: 'on', by, lockout: reason });
  }
  if (withheld.length > 0) {
    logger.warn('alerts withheld: open notification quota reached', {
      alerts: withheld.map(({ group, topic, kind }) => ({ group, topic, kind })),
    });
  }
  for (const { group, stage, error } of failures) {
    const cause = error instanceof Error ? error : new Error(String(error));
    logger[isDomainError(error) ? 'warn' : 'error']('automation group failed', {
      group,
      stage,
      error: cause.message,
      ...(isDomainError(error) ? { code: error.code } : { stack: cause.stack }),
    });
  }
  if (switched.length === 0 && alerts.length === 0) return;
  logger.info('automation tick', {
    switched: switched.map(({ group, object, value, previousValue, trigger, rule, slot, late }) => ({
      group,
      object,
      value,
      previousValue,
      trigger,
      rule,
      ...(late === true && slot !== undefined ? { late, slot: slot.toISOString() } : {}),
    })),
    alerts: alerts.map(({ group, topic, message }) => ({
      group,
      ...(topic === undefined ? {} : { topic }),
      message,
    })),
  });
}

async function shutDown(
  http: HttpServer,
  https: HttpsListener | undefined,
  store: StoreLifecycle,
  background: BackgroundWork,
  logger: Logger,
  graceMs: number,
  sharedLimit: StartedRateLimit | undefined,
): Promise<void> {
  logger.info('shutting down', { graceMs });
  // The engine's tick in progress finishes while requests drain; both need the store.
  await Promise.all([
    http.close(graceMs),
    https?.close(graceMs),
    background.engine?.stop(),
    background.delivery?.stop(),
    background.retention.stop(),
    // A backup under way finishes: it is one consistent copy or none (a cut one is removed).
    background.backups?.stop(),
  ]);
  if (background.engine !== undefined) logger.info('automations stopped');
  // After the requests: a change they made is still published; what the bridge queued is stored.
  await background.mqtt?.stop();
  sharedLimit?.close();
  await store.close();
  logger.info('stopped');
  // The request log is written in batches: nothing it holds may be lost once close() has resolved.
  logger.flush?.();
}
