import 'reflect-metadata';
import * as chai from 'chai';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { memoryStoreModule } from '@hortus/adapter-memory';
import { CapturingLogger, TEST_BCRYPT_COST } from '@hortus/test-support';
import {
  COMMIT_FEED,
  type CommitFeed,
  createCoreModule,
  defaultCoreSettings,
  LOGGER,
  type Logger,
} from '@hortus/core';
import { type HttpSettings, httpModule, HttpServer, httpSettingsFromEnv } from '@hortus/http-koa';
import { identityModule, identitySettingsFromEnv, nodeCryptoModule } from '@hortus/identity';
import { mailModule, notifierModule } from '@hortus/mail';
import { Container, ContainerModule } from 'inversify';

export const { expect } = chai;

export interface AppOnMemory {
  readonly url: string;
  readonly logger: CapturingLogger;
  readonly container: Container;
  close(): Promise<void>;
}

/**
 * The HTTP transport on the memory store, composed here without the CLI: core, the memory store, the
 * sideways packages that implement core's ports (identity, mail), and the outbound commit feed faked at
 * its seam. The whole application, as users start it, is tested in @hortus/e2e.
 */
export async function startAppOnMemory(
  env: Record<string, string> = {},
  /** Runs before the transport is built: e.g. `onActivation` to put a fake in front of a port. */
  configure?: (container: Container) => void,
): Promise<AppOnMemory> {
  const logger = new CapturingLogger();
  const settings: HttpSettings = httpSettingsFromEnv({ ALLOWED_HOSTS: '127.0.0.1', ...env });
  const noCommits: CommitFeed = { recentCommits: () => Promise.resolve([]) };
  const container = new Container();
  container.load(
    createCoreModule({ ...defaultCoreSettings, timeZone: 'UTC' }),
    memoryStoreModule(),
    nodeCryptoModule(),
    identityModule({ ...identitySettingsFromEnv({}), bcryptCost: TEST_BCRYPT_COST }),
    mailModule({ from: 'hortus@localhost' }, logger),
    notifierModule(),
    new ContainerModule(({ bind }) => {
      bind<Logger>(LOGGER).toConstantValue(logger);
      bind<CommitFeed>(COMMIT_FEED).toConstantValue(noCommits);
    }),
    httpModule(settings),
  );
  configure?.(container);
  const http = container.get(HttpServer);
  const server: Server = createServer(http.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    logger,
    container,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
