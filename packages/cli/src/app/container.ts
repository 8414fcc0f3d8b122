import {
  type Clock,
  createCoreModule,
  LOGGER,
  type Logger,
  SCHEDULER,
  type Scheduler,
  SystemClock,
} from '@hortus/core';
import { identityModule, nodeCryptoModule } from '@hortus/identity';
import { commitFeedModule, mailModule, notifierModule } from '@hortus/mail';
import { Container, ContainerModule } from 'inversify';
import { IntervalScheduler } from './background.js';
import { type AppConfig, type DataConfig, type StoreKind } from './config.js';
import { createJsonLogger } from './json-logger.js';

export interface ContainerOverrides {
  /** The time source of the core; tests pass a fake one to move the commit cache's clock. */
  readonly clock?: Clock;
  /** Where the scheduler, the HTTP server and the MQTT bridge log; by default JSON lines on stdout. */
  readonly logger?: Logger;
}

/**
 * The one place that chooses the store: choosing a store means choosing its module. Every store module
 * binds the repositories and the store's lifecycle (core's STORE_LIFECYCLE). Only the chosen adapter is
 * loaded (with its driver): a command on SQLite never loads the MongoDB driver.
 */
export async function storeModule(
  config: Pick<DataConfig, 'store' | 'sqlite' | 'mongo' | 'mongodbUri'>,
): Promise<ContainerModule> {
  const kind: StoreKind = config.store;
  switch (kind) {
    case 'sqlite': {
      const { sqliteSettingsFromEnv, SqliteStore } = await import('@hortus/adapter-sqlite');
      return SqliteStore.fromSettings(config.sqlite ?? sqliteSettingsFromEnv({})).module();
    }
    case 'memory': {
      const { memoryStoreModule } = await import('@hortus/adapter-memory');
      return memoryStoreModule();
    }
    case 'mongodb': {
      const { MongoStore } = await import('@hortus/adapter-mongo');
      // loadDataConfig guarantees MONGODB_URI (and so these settings) whenever the store is mongodb.
      return MongoStore.fromSettings(config.mongo ?? { uri: config.mongodbUri ?? '' }).module();
    }
  }
}

/** Where commands report what they do not print (a mail that could not go out): stderr, one JSON line each. */
const stderrLogger = (config: DataConfig): Logger =>
  createJsonLogger((line) => process.stderr.write(line), undefined, config.logLevel);

/**
 * The core on the chosen store, with the platform's access-key secrets, the account ports (bcrypt, tokens),
 * the mailer and the one logger: what every command needs.
 */
export async function coreOnStore(
  config: DataConfig,
  clock: Clock = new SystemClock(),
  logger: Logger = stderrLogger(config),
): Promise<ContainerModule[]> {
  return [
    createCoreModule(
      {
        timeZone: config.timeZone,
        commitsCacheMs: config.commitsCacheMs,
        automation: { tickMs: config.automationTickMs },
        limits: config.limits,
        retention: config.retention,
        boxes: config.boxes,
      },
      clock,
    ),
    await storeModule(config),
    nodeCryptoModule(),
    new ContainerModule(({ bind }) => {
      bind<Logger>(LOGGER).toConstantValue(logger);
    }),
    identityModule(config.identity),
    mailModule(config.mail, logger),
    notifierModule(config.webhooks),
  ];
}

/**
 * The application's composition root: core, one store, the HTTP transport with the code host's commit
 * feed its commits route asks, the scheduler the automation engine runs on, and the MQTT bridge when
 * configured. The transports are loaded here, for `serve`, and never by the data commands.
 */
export async function createContainer(
  config: AppConfig,
  overrides: ContainerOverrides = {},
): Promise<Container> {
  const logger = overrides.logger ?? createJsonLogger(undefined, undefined, config.logLevel);
  const [{ httpModule }, mqtt] = await Promise.all([
    import('@hortus/http-koa'),
    config.mqtt === undefined ? undefined : import('@hortus/mqtt'),
  ]);
  const container = new Container();
  container.load(
    ...(await coreOnStore(config, overrides.clock, logger)),
    httpModule(config),
    commitFeedModule(config.codeHost),
    new ContainerModule(({ bind }) => {
      bind<Scheduler>(SCHEDULER).toConstantValue(new IntervalScheduler(logger));
    }),
  );
  if (config.mqtt !== undefined && mqtt !== undefined) container.load(mqtt.mqttModule(config.mqtt));
  return container;
}
