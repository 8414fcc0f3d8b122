import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  ACTION_REPOSITORY,
  type Clock,
  CreateAction,
  CreateDevice,
  CreateGroup,
  CreateNotification,
  CreateUser,
  DEVICE_REPOSITORY,
  GROUP_REPOSITORY,
  HISTORY_CHART_REPOSITORY,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
  RecordReadings,
  STORE_LIFECYCLE,
  type StoreLifecycle,
  USER_REPOSITORY,
} from '@hortus/core';
import { attemptCollection, MongoStore } from '@hortus/adapter-mongo';
import { CapturingLogger, TEST_BCRYPT_COST } from '@hortus/test-support';
import { type AppConfig, createContainer, loadConfig, type RunningServer, startServer } from '@hortus/cli';
import { type Container } from 'inversify';

chai.use(chaiAsPromised);
export const { expect } = chai;

/** The clock seam: tests move time to expire the commit cache and to pin "today". */
export class FakeClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export { CapturingLogger };

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (throws when it is not JSON). */
  json(): unknown;
}

export interface CallOptions {
  readonly json?: unknown;
  readonly body?: string;
  readonly headers?: Record<string, string>;
}

export interface TestServer {
  readonly url: string;
  readonly container: Container;
  readonly clock: FakeClock;
  readonly logger: CapturingLogger;
  readonly running: RunningServer;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  get(path: string): Promise<Reply>;
  /** A fresh name, so tests sharing one server never see each other's data. */
  unique(prefix: string): string;
  seed: Seeder;
  close(): Promise<void>;
}

export const testNow = new Date('2025-06-15T12:30:00.000Z');

export type TestStoreKind = 'memory' | 'mongodb' | 'sqlite';

/**
 * The store the HTTP suites run on. scripts/test.sh runs them on memory, then with
 * HORTUS_TEST_STORE=sqlite, where every test server gets a data directory of its own (removed at close),
 * then with HORTUS_TEST_STORE=mongodb against $MONGODB_URI, where every test server gets a database of its
 * own (dropped at close), so the same routes are proven on every adapter.
 */
export const testStore: TestStoreKind = ((): TestStoreKind => {
  const named = process.env['HORTUS_TEST_STORE']?.trim();
  return named === 'mongodb' || named === 'sqlite' ? named : 'memory';
})();
const testMongoUri = process.env['MONGODB_URI']?.trim() ?? '';
if (testStore === 'mongodb' && testMongoUri === '') {
  throw new Error('HORTUS_TEST_STORE=mongodb needs MONGODB_URI (eval "$(bash scripts/ferretdb.sh start)")');
}

/** The environment that puts one test server on its store: a fresh data directory or database. */
function storeEnv(store: TestStoreKind): Record<string, string> {
  if (store === 'memory') return { STORE: 'memory' };
  if (store === 'sqlite') {
    return { STORE: 'sqlite', HORTUS_DATA_DIR: mkdtempSync(join(tmpdir(), 'hortus-http-')) };
  }
  return {
    STORE: 'mongodb',
    MONGODB_URI: testMongoUri,
    MONGODB_DB: `hortus_http_${randomBytes(6).toString('hex')}`,
    // FerretDB on SQLite under a loaded CI machine answers some queries after the 2 s production deadline;
    // the deadline's own behaviour is tested with store doubles, so test servers wait longer. A suite may
    // still set MONGODB_TIMEOUT_MS itself.
    MONGODB_TIMEOUT_MS: '20000',
  };
}

async function dropTestDatabase(config: AppConfig): Promise<void> {
  if (config.store === 'sqlite' && config.sqlite !== undefined) {
    rmSync(dirname(config.sqlite.file), { recursive: true, force: true });
    return;
  }
  if (config.store !== 'mongodb' || config.mongo === undefined) return;
  const store = MongoStore.fromSettings(config.mongo);
  try {
    await store.db.dropDatabase();
  } finally {
    await store.close();
  }
}

/** Seeds through the core use cases of the server's own container (the test acts as a composition root). */
export class Seeder {
  constructor(private readonly container: Container) {}

  action(group: string, object: string, value = 'off'): Promise<unknown> {
    return this.container.get(CreateAction).execute({ group, object, value });
  }
  group(name: string, settings?: unknown): Promise<unknown> {
    return this.container.get(CreateGroup).execute({ name, ...(settings === undefined ? {} : { settings }) });
  }
  device(deviceId: string, group: string, type = 'sensor-box'): Promise<unknown> {
    return this.container.get(CreateDevice).execute({ deviceId, group, type });
  }
  notification(group: string, time: string, message = 'Soil is dry'): Promise<unknown> {
    return this.container.get(CreateNotification).execute({ group, time, message });
  }
  async user(email: string): Promise<string> {
    const user = await this.container
      .get(CreateUser)
      .execute({ firstName: 'Ada', lastName: 'Grower', email, group: 'g' });
    return user.id;
  }
  readings(
    items: readonly { group: string; topic: string; value: unknown; time: string }[],
  ): Promise<unknown> {
    return this.container.get(RecordReadings).execute(items);
  }
}

export interface TestServerOptions {
  readonly mqttRetryMs?: number;
  /** How long the MQTT bridge waits for the broker per start attempt (no environment variable sets it). */
  readonly mqttStartTimeoutMs?: number;
  /**
   * `memory` keeps this server on the memory store in the Mongo pass too: for tests that replace the
   * repositories with failing stubs or look at memory-only internals. By default, testStore.
   */
  readonly store?: TestStoreKind;
}

/**
 * A server on a free port with a fake clock at testNow. The automation engine is off unless the env turns
 * it on (AUTOMATIONS=on), so no background tick writes into a test's groups behind its back.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  prepare?: (container: Container) => void,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const loaded: AppConfig = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    AUTOMATIONS: 'off',
    // Suites send hundreds of requests from one address; the rate limit has tests of its own.
    RATE_LIMIT_PER_MINUTE: '0',
    SIGNUPS_PER_ADDRESS: '0',
    SIGNUPS_TOTAL: '0',
    // The suites' clocks and time rules are written in UTC (the default zone is Europe/Berlin).
    TIME_ZONE: 'UTC',
    ...storeEnv(options.store ?? testStore),
    ...env,
  });
  // BCRYPT_COST has a floor of 12 for real servers; tests hash at the lowest cost unless they name one.
  const hashing: AppConfig =
    env['BCRYPT_COST'] === undefined
      ? { ...loaded, identity: { ...loaded.identity, bcryptCost: TEST_BCRYPT_COST } }
      : loaded;
  const config: AppConfig =
    hashing.mqtt === undefined || options.mqttStartTimeoutMs === undefined
      ? hashing
      : { ...hashing, mqtt: { ...hashing.mqtt, startTimeoutMs: options.mqttStartTimeoutMs } };
  const clock = new FakeClock(testNow);
  const logger = new CapturingLogger();
  const container = await createContainer(config, { clock, logger });
  prepare?.(container);
  const running = await startServer(config, {
    container,
    logger,
    shutdownGraceMs: 1000,
    ...(options.mqttRetryMs === undefined ? {} : { mqttRetryMs: options.mqttRetryMs }),
  }).catch(async (error: unknown) => {
    await dropTestDatabase(config);
    throw error;
  });
  let counter = 0;
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(`${running.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: () => JSON.parse(text) as unknown,
    };
  };
  return {
    url: running.url,
    container,
    clock,
    logger,
    running,
    call,
    get: (path) => call('GET', path),
    unique: (prefix) => `${prefix}-${(counter += 1)}`,
    seed: new Seeder(container),
    close: async () => {
      try {
        await running.close();
      } finally {
        await dropTestDatabase(config);
      }
    },
  };
}

/**
 * Lets the log-in and sign-up windows pass: the fake clock moves on. On MongoDB the attempts are counted
 * in the database on real time (rate-limiter-flexible), which no fake clock moves, so they are removed;
 * the AttemptCounter contract proves there that a window ends by itself.
 */
export async function attemptWindowsPass(api: TestServer, ms: number): Promise<void> {
  api.clock.advance(ms);
  const store = api.container.get<StoreLifecycle>(STORE_LIFECYCLE);
  if (store instanceof MongoStore) await store.db.collection(attemptCollection.name).deleteMany({});
}

/** The value of one sample line of a /metrics exposition, or undefined when the series is absent. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Polls until the check passes (returns without throwing); after `waitMs` it fails with the check's error. */
export async function eventually<T>(check: () => Promise<T> | T, waitMs = 5000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Every repository port, for tests that replace the store with a failing one. */
export const repositoryTokens = [
  READING_REPOSITORY,
  ACTION_REPOSITORY,
  DEVICE_REPOSITORY,
  NOTIFICATION_REPOSITORY,
  HISTORY_CHART_REPOSITORY,
  GROUP_REPOSITORY,
  USER_REPOSITORY,
];

/** A store whose every method rejects with the given error: the only way to reach a route's 500 answer. */
export function failingStore(container: Container, error: () => Error): void {
  const methods = [
    ...['add', 'latest', 'latestOfEveryTopic', 'newestFirst', 'oldest', 'create', 'find', 'listByGroup'],
    ...['setValue', 'setAutomations', 'listOpen', 'ignoreAt', 'findByUser', 'appendChart', 'updateChart'],
    ...['removeCharts', 'findByName', 'list', 'replaceSettings', 'findById', 'changeEmail'],
    ...['aggregate', 'revision', 'deleteRange', 'countTopics', 'knownTopics', 'countOpen'],
    ...['findByEmail', 'findCredentials', 'setPassword', 'endSessions'],
    ...['setResetToken', 'resetPassword', 'delete', 'addEmployee'],
  ];
  const broken = Object.fromEntries(methods.map((method) => [method, () => Promise.reject(error())]));
  for (const token of repositoryTokens) container.rebind(token).toConstantValue(broken);
}

export type FakeHostHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** A stand-in for the code host on 127.0.0.1; tests set what it answers and read what it was asked. */
export class FakeCodeHost {
  readonly requests: { url: string; headers: IncomingMessage['headers'] }[] = [];
  handler: FakeHostHandler = (_request, response) => response.writeHead(500).end();
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      this.requests.push({ url: request.url ?? '', headers: request.headers });
      this.handler(request, response);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answerJson(status: number, body: unknown): void {
    this.handler = (_request, response) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
