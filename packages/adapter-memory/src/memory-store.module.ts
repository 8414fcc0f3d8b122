import { ContainerModule } from 'inversify';
import {
  ATTEMPT_COUNTER,
  type AttemptCounter,
  InProcessAttemptCounter,
  bindRepositoryClasses,
  newRepositories,
  type Repositories,
  STORE_LIFECYCLE,
  type StoreLifecycle,
} from '@hortus/core';
import { inMemoryRepositoryClasses } from './repositories.js';
import { MEMORY_CHANGES, MemoryChanges } from './revisions.js';

/** Every repository of one store, for callers that work without a container (tests, tools). */
export interface MemoryStore extends Repositories {
  /** Nothing to release; present so a memory store can stand wherever a closable store is expected. */
  close(): Promise<void>;
}

/** A fresh, empty store. */
export function createMemoryStore(): MemoryStore {
  return { ...newRepositories(inMemoryRepositoryClasses, new MemoryChanges()), close: async () => {} };
}

/** Nothing to connect, prepare or release: the store lives as long as its container. */
const inMemoryLifecycle: StoreLifecycle = {
  start: async () => {},
  close: async () => {},
  ping: async () => true,
};

/**
 * Binds every repository port to a singleton of its in-memory class, and a lifecycle with nothing to do. Singletons live per container, so
 * each container that loads this module gets its own fresh store.
 */
export function memoryStoreModule(): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<MemoryChanges>(MEMORY_CHANGES).to(MemoryChanges).inSingletonScope();
    bindRepositoryClasses(bind, inMemoryRepositoryClasses);
    bind<StoreLifecycle>(STORE_LIFECYCLE).toConstantValue(inMemoryLifecycle);
    bind<AttemptCounter>(ATTEMPT_COUNTER).to(InProcessAttemptCounter).inSingletonScope();
  });
}
