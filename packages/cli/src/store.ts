import { STORE_LIFECYCLE, type StoreLifecycle } from '@hortus/core';
import { Container, type ServiceIdentifier } from 'inversify';
import { loadConfig } from './app/config.js';
import { coreOnStore } from './app/container.js';
import { UsageError } from './exit-codes.js';
import { type RunIo } from './io.js';

/** Hands a command the use case it asks for; the only way commands reach the container. */
export type UseCaseResolver = <T>(useCase: ServiceIdentifier<T>) => T;

/**
 * The composition root for data commands: core plus the store the server would pick (the same loadConfig
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
  const config = loadConfig(io.env);
  if (config.store === 'memory') {
    throw new UsageError(
      `${commandName} needs a persistent store, and STORE=memory selects the in-memory store. ` +
        'Unset STORE to use the SQLite file in HORTUS_DATA_DIR, or set MONGODB_URI=mongodb://host:27017/hortus ' +
        '(the in-memory store exists only inside `hortus serve`).',
    );
  }
  const container = new Container();
  container.load(...coreOnStore(config));
  const store = container.get<StoreLifecycle>(STORE_LIFECYCLE);
  try {
    await store.start();
    return await work((useCase) => container.get(useCase));
  } finally {
    await store.close();
  }
}
