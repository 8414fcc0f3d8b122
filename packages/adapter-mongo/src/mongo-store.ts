import { ContainerModule } from 'inversify';
import { type Db, MongoClient, type MongoClientOptions } from 'mongodb';
import {
  ATTEMPT_COUNTER,
  type AttemptCounter,
  bindRepositoryClasses,
  newRepositories,
  type Repositories,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  type StoreSchema,
  StoreUnavailableError,
} from '@hortus/core';
import { accessKeyCollection } from './access-key.repository.js';
import { attemptCollection, MongoAttemptCounter } from './attempt-counter.js';
import { actionCollection } from './action.repository.js';
import { automationLogCollection } from './automation-log.repository.js';
import { actionHistoryCollection } from './action-history.repository.js';
import { MongoDatabase } from './database.js';
import { deviceCollection, pendingDeviceCollection } from './device.repository.js';
import { engineStateCollection } from './engine-state.repository.js';
import { groupCollection, groupEmployeeCollection } from './group.repository.js';
import { historyChartCollection, historyChartRevisionCollection } from './history-chart.repository.js';
import { notificationCollection } from './notification.repository.js';
import { latestReadingCollection } from './latest-readings.js';
import { readingCollection } from './reading.repository.js';
import {
  appliedMongoMigrations,
  applyMigrations,
  refuseNewerDatabase,
  schemaVersionCollection,
} from './migrations.js';
import { mongoRepositoryClasses } from './repositories.js';
import { revisionCollection } from './revisions.js';
import { rollupCollections } from './rollups.js';
import { serverSecretCollection } from './server-secret.repository.js';
import { firmwareCollection } from './firmware.repository.js';
import { stageCollection } from './stage.repository.js';
import { auditCollection } from './audit-log.repository.js';
import {
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
  dbNameInUri,
} from './settings.js';
import { type CollectionSpec, isUnavailableError, MONGO_DATABASE, withDeadline } from './support.js';
import { usedInvitationCollection, usedResetCollection, userCollection } from './user.repository.js';

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
  usedInvitationCollection,
  engineStateCollection,
  automationLogCollection,
  actionHistoryCollection,
  revisionCollection,
  ...rollupCollections,
  accessKeyCollection,
  serverSecretCollection,
  firmwareCollection,
  stageCollection,
  auditCollection,
  outboxCollection,
  notifySettingsCollection,
  outboxClaimCollection,
  schemaVersionCollection,
  attemptCollection,
];

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

/** The database of the options on the client, with its context: the deadline and the revision mirror. */
export function openDatabase(client: MongoClient, options: MongoDatabaseOptions): MongoDatabase {
  const w = options.writeConcern ?? client.options.writeConcern?.w ?? DEFAULT_WRITE_CONCERN;
  const db = client.db(options.dbName, { writeConcern: { ...client.options.writeConcern, w } });
  return new MongoDatabase(db, {
    operationDeadlineMs: options.operationTimeoutMS ?? DEFAULT_OPERATION_TIMEOUT_MS,
    revisionPollMs: options.revisionPollMS ?? DEFAULT_REVISION_POLL_MS,
  });
}

function bindRepositories(database: MongoDatabase, lifecycle?: StoreLifecycle): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<MongoDatabase>(MONGO_DATABASE).toConstantValue(database);
    if (lifecycle !== undefined) bind<StoreLifecycle>(STORE_LIFECYCLE).toConstantValue(lifecycle);
    bindRepositoryClasses(bind, mongoRepositoryClasses);
    // In the database: every server on this MongoDB counts log-ins and sign-ups together.
    bind<AttemptCounter>(ATTEMPT_COUNTER).to(MongoAttemptCounter).inSingletonScope();
  });
}

/** Binds every repository port to its Mongo class, all sharing one client and database. */
export function mongoStoreModule(client: MongoClient, options: MongoDatabaseOptions): ContainerModule {
  return bindRepositories(openDatabase(client, options));
}

/** Every repository of one store, for callers that work without a container (tests, tools). */
export type MongoRepositories = Repositories;

/**
 * Creates the indexes the repositories' queries rely on, and applies the migrations (migrations.ts) the
 * database has not had: data of an older layout moved into the current one. A no-op when both are done.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  await refuseNewerDatabase(db);
  await applyMigrations(db, 'beforeIndexes');
  for (const { name, indexes } of collections) {
    // One index per command: FerretDB v1 fails a createIndexes naming several existing indexes.
    for (const index of indexes) await db.collection(name).createIndexes([index]);
  }
  await applyMigrations(db, 'afterIndexes');
}

/**
 * Lifecycle of the Mongo store: connect and create indexes at start, report health, close at shutdown.
 * After a successful start the driver reconnects by itself; while the server is unreachable every
 * request fails within the server selection timeout with StoreUnavailableError.
 */
export class MongoStore implements StoreLifecycle {
  /** The database with its context (deadline, revision mirror), which the repositories share. */
  readonly database: MongoDatabase;
  readonly db: Db;

  private readonly deadlineMs: number;

  constructor(
    readonly client: MongoClient,
    options: MongoDatabaseOptions,
  ) {
    this.database = openDatabase(client, options);
    this.db = this.database.db;
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

  /** The migrations recorded in the database, read without applying any. */
  async schema(): Promise<StoreSchema> {
    try {
      await this.client.connect();
      return await appliedMongoMigrations(this.db);
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
    return bindRepositories(this.database, this);
  }

  repositories(): MongoRepositories {
    return newRepositories(mongoRepositoryClasses, this.database);
  }

  /**
   * Closes the client. The driver first tells the server which sessions end, and a frozen server never
   * answers that: after one operation deadline the client's connections and monitors are closed without it,
   * so a shutdown during a freeze still ends within its grace period.
   */
  async close(): Promise<void> {
    this.database.stopRevisionMirror();
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
