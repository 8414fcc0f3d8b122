import {
  type CopyStores,
  copiedRepositories,
  repositoryTokens,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  type StoreSchema,
} from '@hortus/core';
import { Container, type ServiceIdentifier } from 'inversify';
import { type DataConfig, loadDataConfig } from './config.js';
import { coreOnStore } from './container.js';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';

/** Hands a command the use case it asks for; the only way commands reach the container. */
export type UseCaseResolver = <T>(useCase: ServiceIdentifier<T>) => T;

/** A store opened with the core on it for one command: its use cases, its repositories, and its close. */
export interface OpenedStore {
  readonly useCase: UseCaseResolver;
  /** The repositories `hortus store copy` reads or writes, by name. */
  repositories(): CopyStores;
  close(): Promise<void>;
}

/** Builds the core on the configured store and starts the store (connected, indexes ensured). */
export async function openStore(config: DataConfig): Promise<OpenedStore> {
  const container = new Container();
  container.load(...(await coreOnStore(config)));
  const store = container.get<StoreLifecycle>(STORE_LIFECYCLE);
  try {
    await store.start();
  } catch (error) {
    // A client that never connected may still hold timers or sockets: closing it lets the process exit.
    await store.close().catch(() => undefined);
    throw error;
  }
  return {
    useCase: (useCase) => container.get(useCase),
    repositories: () =>
      Object.fromEntries(
        copiedRepositories.map((name) => [name, container.get(repositoryTokens[name])]),
      ) as unknown as CopyStores,
    close: () => store.close(),
  };
}

/**
 * The composition root for data commands: core plus the store the server would pick (the same loadDataConfig
 * and store module: MONGODB_URI set means MongoDB, else the SQLite file, STORE may override), but never the
 * in-memory one: a throwaway store would accept the command's writes and lose them at exit. A server may
 * have the same SQLite file open: both use it at once (WAL), and the server's next poll sees the change. The store is opened
 * (connected, indexes ensured) for one command and closed after it. A container passed in by the caller
 * (tests) is used as it is and left open.
 */
export async function withUseCases<T>(
  io: RunIo,
  commandName: string,
  work: (useCase: UseCaseResolver) => Promise<T>,
): Promise<T> {
  const given = io.container;
  if (given !== undefined) return work((useCase) => given.get(useCase));
  const config = loadDataConfig(io.env);
  if (config.store === 'memory') {
    throw new UsageError(
      `${commandName} needs a persistent store, and STORE=memory selects the in-memory store. ` +
        'Unset STORE to use the SQLite file in HORTUS_DATA_DIR, or set MONGODB_URI=mongodb://host:27017/hortus ' +
        '(the in-memory store exists only inside `hortus serve`).',
    );
  }
  const store = await openStore(config);
  try {
    return await work(store.useCase);
  } finally {
    await store.close();
  }
}

/**
 * The configured store's applied migrations, read without starting it: `config check` must not migrate (nor
 * back up) a file. Undefined for the in-memory store, which has none.
 */
export async function readStoreSchema(io: RunIo): Promise<StoreSchema | undefined> {
  const given = io.container;
  if (given !== undefined) return given.get<StoreLifecycle>(STORE_LIFECYCLE).schema?.();
  const config = loadDataConfig(io.env);
  if (config.store === 'memory') return undefined;
  const container = new Container();
  container.load(...(await coreOnStore(config)));
  const store = container.get<StoreLifecycle>(STORE_LIFECYCLE);
  try {
    return await store.schema?.();
  } finally {
    await store.close().catch(() => undefined);
  }
}
