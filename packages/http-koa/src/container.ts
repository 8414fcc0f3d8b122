import { memoryStoreModule } from '@hortus/adapter-memory';
import { MongoStore } from '@hortus/adapter-mongo';
import {
  ACCESS_KEY_SECRETS,
  type AccessKeySecrets,
  type Clock,
  COMMIT_FEED,
  type CommitFeed,
  createCoreModule,
  SCHEDULER,
  type Scheduler,
  SystemClock,
} from '@hortus/core';
import { type MqttLogger, mqttModule } from '@hortus/mqtt';
import { Container, ContainerModule } from 'inversify';
import { ACCESS_SETTINGS, AccessControl, type AccessSettings, NodeAccessKeySecrets } from './access.js';
import { IntervalScheduler } from './background.js';
import { CODE_HOST_CONFIG, KyCommitFeed } from './commit-feed.js';
import { type CodeHostConfig, type HttpConfig } from './config.js';
import { createJsonLogger, type Logger } from './logger.js';
import { countingIngest, HTTP_METRICS, HttpMetrics } from './metrics.js';
import { httpUseCaseClasses, type HttpUseCases } from './routing.js';

export const HTTP_USE_CASES = Symbol.for('hortus.http.UseCases');
export const HTTP_LOGGER = Symbol.for('hortus.http.Logger');

export interface ContainerOverrides {
  /** The time source of the core; tests pass a fake one to move the commit cache's clock. */
  readonly clock?: Clock;
  /** Where the scheduler and the MQTT bridge log; by default JSON lines on stdout. */
  readonly logger?: Logger;
}

/** A store as the server sees it: the module binding every repository port, and its lifecycle. */
export interface StoreHandle {
  readonly module: ContainerModule;
  /** Connects (and prepares indexes) before the server listens; rejects when the store is unreachable. */
  start(): Promise<void>;
  /** Releases connections; called once at shutdown. */
  close(): Promise<void>;
  /** Whether the store answers right now (/readyz). */
  ping(): Promise<boolean>;
}

export const STORE_HANDLE = Symbol.for('hortus.http.StoreHandle');

/** The one place that chooses the store. */
export function openStore(config: HttpConfig): StoreHandle {
  switch (config.store) {
    case 'memory':
      return {
        module: memoryStoreModule(),
        start: async () => {},
        close: async () => {},
        ping: async () => true,
      };
    case 'mongodb': {
      // loadConfig guarantees MONGODB_URI (and so these settings) whenever the store is mongodb.
      const store = MongoStore.fromSettings(config.mongo ?? { uri: config.mongodbUri ?? '' });
      return {
        module: store.module(),
        start: () => store.start(),
        close: () => store.close(),
        ping: () => store.ping(),
      };
    }
  }
}

/**
 * Binds what the HTTP transport adds to the core: the code-host feed, the scheduler the automation engine
 * runs on, the logger, access keys, metrics and the use cases its routes call.
 */
export function transportModule(config: HttpConfig, logger: Logger): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<Logger>(HTTP_LOGGER).toConstantValue(logger);
    bind<Scheduler>(SCHEDULER).toConstantValue(new IntervalScheduler(logger));
    bind<CodeHostConfig>(CODE_HOST_CONFIG).toConstantValue(config.codeHost);
    bind<CommitFeed>(COMMIT_FEED).to(KyCommitFeed).inSingletonScope();
    bind<AccessKeySecrets>(ACCESS_KEY_SECRETS).toConstantValue(new NodeAccessKeySecrets());
    bind<AccessSettings>(ACCESS_SETTINGS).toConstantValue({ mode: config.auth, cacheMs: config.authCacheMs });
    bind<AccessControl>(AccessControl).toSelf().inSingletonScope();
    bind<HttpMetrics>(HTTP_METRICS).toConstantValue(new HttpMetrics());
    bind<HttpUseCases>(HTTP_USE_CASES)
      .toDynamicValue((context) => {
        const useCases = Object.fromEntries(
          Object.entries(httpUseCaseClasses).map(([name, useCase]) => [name, context.get<object>(useCase)]),
        ) as unknown as HttpUseCases;
        const metrics = context.get<HttpMetrics>(HTTP_METRICS);
        return { ...useCases, recordReadings: countingIngest(useCases.recordReadings, metrics) };
      })
      .inSingletonScope();
  });
}

/** The bridge's events (`{level, event, ...}`) as lines of the server's own log. */
export function mqttLoggerFor(logger: Logger): MqttLogger {
  return ({ level, event, ...fields }) => {
    logger[level === 'warn' || level === 'error' ? level : 'info'](String(event), fields);
  };
}

/** Composition root of the HTTP transport: core, one store, transport, and the MQTT bridge when configured. */
export function createContainer(config: HttpConfig, overrides: ContainerOverrides = {}): Container {
  const store = openStore(config);
  const logger = overrides.logger ?? createJsonLogger();
  const container = new Container();
  container.load(
    createCoreModule(
      {
        timeZone: config.timeZone,
        commitsCacheMs: config.commitsCacheMs,
        automation: { tickMs: config.automationTickMs },
      },
      overrides.clock ?? new SystemClock(),
    ),
    store.module,
    transportModule(config, logger),
    new ContainerModule(({ bind }) => {
      bind<StoreHandle>(STORE_HANDLE).toConstantValue(store);
    }),
  );
  if (config.mqtt !== undefined) container.load(mqttModule(config.mqtt, mqttLoggerFor(logger)));
  return container;
}
