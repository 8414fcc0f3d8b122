import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { use } from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { memoryStoreModule } from '@hortus/adapter-memory';
import { mongoSettingsFromEnv, MongoStore } from '@hortus/adapter-mongo';
import { SqliteStore } from '@hortus/adapter-sqlite';
import {
  type Clock,
  createCoreModule,
  defaultCoreSettings,
  LOGGER,
  type Logger,
  silentLogger,
  STORE_LIFECYCLE,
  type StoreLifecycle,
} from '@hortus/core';
import { createJsonLogger, type RunIo, run } from '@hortus/cli';
import { TEST_BCRYPT_COST } from '@hortus/test-support';
import { identityModule, identitySettingsFromEnv, nodeCryptoModule } from '@hortus/identity';
import { mailModule } from '@hortus/mail';
import { Container, ContainerModule } from 'inversify';

use(chaiAsPromised);

/** Collects what the CLI writes; `isTTY` makes it stand in for a terminal. */
export class Capture {
  text = '';
  constructor(readonly isTTY = false) {}

  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

function containerOn(store: ContainerModule, clock: Clock | undefined): Container {
  const container = new Container();
  container.load(
    createCoreModule({ ...defaultCoreSettings, timeZone: 'UTC' }, clock),
    store,
    nodeCryptoModule(),
    // As the composition root binds it: use cases log events (a refused onboarding, ...).
    new ContainerModule(({ bind }) => {
      bind<Logger>(LOGGER).toConstantValue(silentLogger);
    }),
    identityModule({ ...identitySettingsFromEnv({}), bcryptCost: TEST_BCRYPT_COST }),
    // Commands never mail (reset-link prints the link); a mail would be a bug worth seeing on stderr.
    mailModule(
      { from: 'hortus@localhost' },
      createJsonLogger((line) => process.stderr.write(line)),
    ),
  );
  return container;
}

/** A container on a fresh memory store: the composition a test hands to `run`. */
export function memoryContainer(clock?: Clock): Container {
  return containerOn(memoryStoreModule(), clock);
}

/**
 * The store the CLI suites run on. scripts/test.sh runs them on memory, then with HORTUS_TEST_STORE=sqlite
 * and HORTUS_TEST_STORE=mongodb (on $MONGODB_URI), so every command is proven on every adapter.
 */
export const testStore = ((): 'memory' | 'sqlite' | 'mongodb' => {
  const named = process.env['HORTUS_TEST_STORE']?.trim();
  return named === 'mongodb' || named === 'sqlite' ? named : 'memory';
})();

export interface StoreContainer {
  readonly container: Container;
  /** Closes the store and removes its file or database. */
  close(): Promise<void>;
}

/**
 * A started container on a fresh store of the kind HORTUS_TEST_STORE names: a data directory or a database
 * of its own. The test acts as the composition root that opens and closes it.
 */
export async function storeContainer(clock?: Clock): Promise<StoreContainer> {
  if (testStore === 'memory') return { container: memoryContainer(clock), close: () => Promise.resolve() };
  if (testStore === 'sqlite') {
    const dataDir = scratchDataDir();
    const store = SqliteStore.fromSettings({ file: join(dataDir, 'hortus.db') });
    return started(containerOn(store.module(), clock), async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
  }
  const uri = process.env['MONGODB_URI']?.trim() ?? '';
  if (uri === '') throw new Error('HORTUS_TEST_STORE=mongodb needs MONGODB_URI');
  const store = MongoStore.fromSettings({
    uri,
    dbName: `hortus_cli_${randomBytes(6).toString('hex')}`,
    // Commands are tested here, not outages: FerretDB on a loaded machine can pass the 2 s production deadline.
    operationTimeoutMS: 20_000,
  });
  return started(containerOn(store.module(), clock), async () => {
    await store.db.dropDatabase();
    await store.close();
  });
}

async function started(container: Container, drop: () => Promise<void>): Promise<StoreContainer> {
  await container.get<StoreLifecycle>(STORE_LIFECYCLE).start();
  return { container, close: drop };
}

export interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const scratchRoot = mkdtempSync(join(tmpdir(), 'hortus-cli-test-'));
process.once('exit', () => rmSync(scratchRoot, { recursive: true, force: true }));
let scratchCount = 0;

/** A fresh, empty data directory for the embedded store, removed when the test process exits. */
export function scratchDataDir(): string {
  scratchCount += 1;
  return join(scratchRoot, `data-${scratchCount}`);
}

/**
 * Runs `hortus <argv>` in-process against the container, as a test's one line of "when". Without a
 * HORTUS_DATA_DIR in the environment it gets a fresh scratch one, so no test ever writes ./data.
 */
export async function hortus(
  container: Container | undefined,
  argv: readonly string[],
  extra: Partial<RunIo> = {},
): Promise<Outcome> {
  const stdout = extra.stdout instanceof Capture ? extra.stdout : new Capture();
  const stderr = extra.stderr instanceof Capture ? extra.stderr : new Capture();
  const code = await run(argv, {
    ...(container === undefined ? {} : { container }),
    ...extra,
    // Times are shown in TIME_ZONE (default Europe/Berlin); the tests read them in UTC unless they set one.
    // FerretDB under a loaded machine (two test runs side by side) answers some operations after the 2 s
    // production deadline, and the command then exits 5: commands on the test MongoDB wait 20 s, as the e2e
    // servers do, unless a test sets the deadline itself.
    env: {
      HORTUS_DATA_DIR: scratchDataDir(),
      TIME_ZONE: 'UTC',
      ...(extra.env?.['MONGODB_URI'] === undefined ? {} : { MONGODB_TIMEOUT_MS: '20000' }),
      ...extra.env,
    },
    stdout,
    stderr,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Drops the database a subprocess test's environment names; nothing to do without MONGODB_URI. */
export async function dropTestDatabase(env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const settings = mongoSettingsFromEnv(env);
  if (settings === undefined) return;
  const store = MongoStore.fromSettings(settings);
  try {
    await store.db.dropDatabase();
  } finally {
    await store.close();
  }
}

/** Retries `check` until it passes or `waitMs` has gone by, then throws its last failure. */
export async function eventually(check: () => unknown, waitMs = 5000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(25);
    }
  }
}
