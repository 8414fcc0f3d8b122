import { ACCESS_KEY_SECRETS, type AccessKeySecrets, createCoreModule } from '@hortus/core';
import { loadConfig, NodeAccessKeySecrets, openStore } from '@hortus/http-koa';
import { Container, type ServiceIdentifier } from 'inversify';
import { UsageError } from './exit-codes.js';
import { type RunIo } from './run.js';

/** Hands a command the use case it asks for; the only way commands reach the container. */
export type UseCaseResolver = <T>(useCase: ServiceIdentifier<T>) => T;

/**
 * The CLI's composition root for data commands: core plus the store the server would pick (its own
 * loadConfig and openStore: MONGODB_URI set means MongoDB, STORE may override), but never the in-memory
 * one: a throwaway store would accept the command's writes and lose them at exit. The store is opened
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
  if (config.store !== 'mongodb') {
    const reason =
      config.mongodbUri === undefined ? 'none is configured' : 'STORE=memory selects the in-memory store';
    throw new UsageError(
      `${commandName} needs a persistent store, and ${reason}. ` +
        'Set MONGODB_URI=mongodb://host:27017/hortus (the in-memory store exists only inside `hortus serve`).',
    );
  }
  const store = openStore(config);
  try {
    await store.start();
    const container = new Container();
    container.load(
      createCoreModule({ timeZone: config.timeZone, commitsCacheMs: config.commitsCacheMs }),
      store.module,
    );
    container.bind<AccessKeySecrets>(ACCESS_KEY_SECRETS).toConstantValue(new NodeAccessKeySecrets());
    return await work((useCase) => container.get(useCase));
  } finally {
    await store.close();
  }
}
