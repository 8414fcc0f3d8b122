import { ContainerModule } from 'inversify';
import { type Db, MongoClient, type MongoClientOptions } from 'mongodb';
import {
  CHANGE_FEED,
  type ChangeFeed,
  ACCESS_KEY_REPOSITORY,
  type AccessKeyRepository,
  ACTION_REPOSITORY,
  type ActionRepository,
  AUTOMATION_LOG_REPOSITORY,
  type AutomationLogRepository,
  DEVICE_REPOSITORY,
  type DeviceRepository,
  ENGINE_STATE_REPOSITORY,
  type EngineStateRepository,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
  NOTIFICATION_REPOSITORY,
  type NotificationRepository,
  READING_REPOSITORY,
  type ReadingRepository,
  SERVER_SECRET_REPOSITORY,
  FIRMWARE_REPOSITORY,
  type FirmwareRepository,
  type ServerSecretRepository,
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  StoreUnavailableError,
  USER_REPOSITORY,
  type UserRepository,
  type Repositories,
} from '@hortus/core';
import { MongoChangeFeed } from './change-feed.js';
import { accessKeyCollection, MongoAccessKeyRepository } from './access-key.repository.js';
import { actionCollection, MongoActionRepository } from './action.repository.js';
import { automationLogCollection, MongoAutomationLogRepository } from './automation-log.repository.js';
import { deviceCollection, MongoDeviceRepository, pendingDeviceCollection } from './device.repository.js';
import { engineStateCollection, MongoEngineStateRepository } from './engine-state.repository.js';
import { groupCollection, groupEmployeeCollection, MongoGroupRepository } from './group.repository.js';
import {
  historyChartCollection,
  historyChartRevisionCollection,
  MongoHistoryChartRepository,
  moveEmbeddedCharts,
} from './history-chart.repository.js';
import { MongoNotificationRepository, notificationCollection } from './notification.repository.js';
import { latestReadingCollection } from './latest-readings.js';
import { MongoReadingRepository, readingCollection } from './reading.repository.js';
import { revisionCollection, setRevisionPollInterval, stopRevisionMirror } from './revisions.js';
import { rollupCollections } from './rollups.js';
import { MongoServerSecretRepository, serverSecretCollection } from './server-secret.repository.js';
import { firmwareCollection, MongoFirmwareRepository } from './firmware.repository.js';
import {
  MongoAlertOutboxRepository,
  notifySettingsCollection,
  outboxClaimCollection,
  outboxCollection,
} from './alert-outbox.repository.js';
import {
  DEFAULT_DB_NAME,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_REVISION_POLL_MS,
  DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
  DEFAULT_WRITE_CONCERN,
  type MongoDatabaseOptions,
  type MongoStoreSettings,
} from './settings.js';
import {
  type CollectionSpec,
  isUnavailableError,
  MONGO_DB,
  setOperationDeadline,
  withDeadline,
} from './support.js';
import { MongoUserRepository, usedResetCollection, userCollection } from './user.repository.js';

/** How much later than the deadline the driver gives up on a silent socket. */
const SOCKET_TIMEOUT_MARGIN_MS = 1000;

export const collections: readonly CollectionSpec[] = [
  readingCollection,
  latestReadingCollection,
  actionCollection,
  deviceCollection,
  pendingDeviceCollection,
  notificationCollection,
  historyChartCollection,
  historyChartRevisionCollection,
  groupCollection,
  groupEmployeeCollection,
  userCollection,
  usedResetCollection,
  engineStateCollection,
  automationLogCollection,
  revisionCollection,
  ...rollupCollections,
  accessKeyCollection,
  serverSecretCollection,
  firmwareCollection,
  outboxCollection,
  notifySettingsCollection,
  outboxClaimCollection,
];

/** The database named in the URI path, if any (`mongodb://host/<db>?...`). */
function dbNameInUri(uri: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/u.exec(uri)?.[1];
  return path === undefined || path === '' ? undefined : decodeURIComponent(path);
}

/** The one client of the process; the composition root owns it and closes it on shutdown. */
export function createMongoClient(settings: MongoStoreSettings): MongoClient {
  const options: MongoClientOptions = { appName: 'hortus' };
  if (settings.serverSelectionTimeoutMS !== undefined) {
    options.serverSelectionTimeoutMS = settings.serverSelectionTimeoutMS;
  } else if (!/[?&]serverSelectionTimeoutMS=/iu.test(settings.uri)) {
    options.serverSelectionTimeoutMS = DEFAULT_SERVER_SELECTION_TIMEOUT_MS;
  }
  const deadline = settings.operationTimeoutMS ?? DEFAULT_OPERATION_TIMEOUT_MS;
  // A silent socket (a frozen server) is given up a little after the operation's deadline, so abandoned
  // commands end and free their connections; the monitor's checks use the connect timeout likewise.
  if (deadline > 0 && !/[?&]socketTimeoutMS=/iu.test(settings.uri)) {
    options.socketTimeoutMS = deadline + SOCKET_TIMEOUT_MARGIN_MS;
  }
  if (deadline > 0 && !/[?&]connectTimeoutMS=/iu.test(settings.uri)) {
    options.connectTimeoutMS = Math.max(deadline + SOCKET_TIMEOUT_MARGIN_MS, 3000);
  }
  return new MongoClient(settings.uri, options);
}

export function openDatabase(client: MongoClient, options: MongoDatabaseOptions): Db {
  const w = options.writeConcern ?? client.options.writeConcern?.w ?? DEFAULT_WRITE_CONCERN;
  const db = client.db(options.dbName, { writeConcern: { ...client.options.writeConcern, w } });
  setOperationDeadline(db, options.operationTimeoutMS ?? DEFAULT_OPERATION_TIMEOUT_MS);
  setRevisionPollInterval(db, options.revisionPollMS ?? DEFAULT_REVISION_POLL_MS);
  return db;
}

function bindRepositories(db: Db, lifecycle?: StoreLifecycle): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<Db>(MONGO_DB).toConstantValue(db);
    if (lifecycle !== undefined) bind<StoreLifecycle>(STORE_LIFECYCLE).toConstantValue(lifecycle);
    bind<ReadingRepository>(READING_REPOSITORY).to(MongoReadingRepository).inSingletonScope();
    bind<ChangeFeed>(CHANGE_FEED).to(MongoChangeFeed).inSingletonScope();
    bind<ActionRepository>(ACTION_REPOSITORY).to(MongoActionRepository).inSingletonScope();
    bind<DeviceRepository>(DEVICE_REPOSITORY).to(MongoDeviceRepository).inSingletonScope();
    bind<NotificationRepository>(NOTIFICATION_REPOSITORY).to(MongoNotificationRepository).inSingletonScope();
    bind<HistoryChartRepository>(HISTORY_CHART_REPOSITORY).to(MongoHistoryChartRepository).inSingletonScope();
    bind<GroupRepository>(GROUP_REPOSITORY).to(MongoGroupRepository).inSingletonScope();
    bind<UserRepository>(USER_REPOSITORY).to(MongoUserRepository).inSingletonScope();
    bind<EngineStateRepository>(ENGINE_STATE_REPOSITORY).to(MongoEngineStateRepository).inSingletonScope();
    bind<AutomationLogRepository>(AUTOMATION_LOG_REPOSITORY)
      .to(MongoAutomationLogRepository)
      .inSingletonScope();
    bind<AccessKeyRepository>(ACCESS_KEY_REPOSITORY).to(MongoAccessKeyRepository).inSingletonScope();
    bind<ServerSecretRepository>(SERVER_SECRET_REPOSITORY).to(MongoServerSecretRepository).inSingletonScope();
    bind<FirmwareRepository>(FIRMWARE_REPOSITORY).to(MongoFirmwareRepository).inSingletonScope();
    bind<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY).to(MongoAlertOutboxRepository).inSingletonScope();
  });
}

/** Binds every repository port to its Mongo class, all sharing one client and database. */
export function mongoStoreModule(client: MongoClient, options: MongoDatabaseOptions): ContainerModule {
  return bindRepositories(openDatabase(client, options));
}

/** Every repository of one store, for callers that work without a container (tests, tools). */
export type MongoRepositories = Repositories;

/**
 * Creates the indexes the repositories' queries rely on, and moves data of an older layout into the current
 * one (history charts kept as one array per user); a no-op when both are done.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const { name, indexes, prepare } of collections) {
    await prepare?.(db.collection(name));
    // One index per command: FerretDB v1 fails a createIndexes naming several existing indexes.
    for (const index of indexes) await db.collection(name).createIndexes([index]);
  }
  await moveEmbeddedCharts(db);
}

/**
 * Lifecycle of the Mongo store: connect and create indexes at start, report health, close at shutdown.
 * After a successful start the driver reconnects by itself; while the server is unreachable every
 * request fails within the server selection timeout with StoreUnavailableError.
 */
export class MongoStore implements StoreLifecycle {
  readonly db: Db;

  private readonly deadlineMs: number;

  constructor(
    readonly client: MongoClient,
    options: MongoDatabaseOptions,
  ) {
    this.db = openDatabase(client, options);
    this.deadlineMs = options.operationTimeoutMS ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  /** A store with its own new client, configured from the settings (see mongoSettingsFromEnv). */
  static fromSettings(settings: MongoStoreSettings): MongoStore {
    return new MongoStore(createMongoClient(settings), {
      dbName: settings.dbName ?? dbNameInUri(settings.uri) ?? DEFAULT_DB_NAME,
      ...(settings.writeConcern === undefined ? {} : { writeConcern: settings.writeConcern }),
      ...(settings.operationTimeoutMS === undefined
        ? {}
        : { operationTimeoutMS: settings.operationTimeoutMS }),
      ...(settings.revisionPollMS === undefined ? {} : { revisionPollMS: settings.revisionPollMS }),
    });
  }

  /**
   * Connects and ensures the indexes. Rejects with StoreUnavailableError when no server answers within
   * the selection timeout; calling it again later retries.
   */
  async start(): Promise<void> {
    try {
      await this.client.connect();
      await ensureIndexes(this.db);
    } catch (error) {
      if (isUnavailableError(error)) throw new StoreUnavailableError(undefined, { cause: error });
      throw error;
    }
  }

  async ensureIndexes(): Promise<void> {
    await ensureIndexes(this.db);
  }

  /** True when the server answers a ping within the operation deadline (and the selection timeout). */
  async ping(): Promise<boolean> {
    try {
      await withDeadline(this.db.command({ ping: 1 }), this.deadlineMs);
      return true;
    } catch {
      return false;
    }
  }

  /** FerretDB answers buildInfo with a `ferretdbVersion` field; tests use it to skip what it lacks. */
  async isFerretDb(): Promise<boolean> {
    const info = await this.db.admin().command({ buildInfo: 1 });
    return 'ferretdbVersion' in info;
  }

  /** Every repository port and this store's lifecycle: what the composition root loads to choose MongoDB. */
  module(): ContainerModule {
    return bindRepositories(this.db, this);
  }

  repositories(): MongoRepositories {
    return {
      readings: new MongoReadingRepository(this.db),
      actions: new MongoActionRepository(this.db),
      devices: new MongoDeviceRepository(this.db),
      notifications: new MongoNotificationRepository(this.db),
      historyCharts: new MongoHistoryChartRepository(this.db),
      groups: new MongoGroupRepository(this.db),
      users: new MongoUserRepository(this.db),
      engineState: new MongoEngineStateRepository(this.db),
      automationLog: new MongoAutomationLogRepository(this.db),
      accessKeys: new MongoAccessKeyRepository(this.db),
      serverSecrets: new MongoServerSecretRepository(this.db),
      firmware: new MongoFirmwareRepository(this.db),
      alertOutbox: new MongoAlertOutboxRepository(this.db),
      changeFeed: new MongoChangeFeed(this.db),
    };
  }

  /**
   * Closes the client. The driver first tells the server which sessions end, and a frozen server never
   * answers that: after one operation deadline the client's connections and monitors are closed without it,
   * so a shutdown during a freeze still ends within its grace period.
   */
  async close(): Promise<void> {
    stopRevisionMirror(this.db);
    const closing = this.client.close();
    try {
      await withDeadline(closing, this.deadlineMs);
    } catch {
      // Not in the driver's public types: the topology owns every socket and timer of the client.
      (this.client as unknown as { topology?: { close(): void } }).topology?.close();
      await closing.catch(() => undefined);
    }
  }
}
