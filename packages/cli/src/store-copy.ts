import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { dbNameInUri } from '@hortus/adapter-mongo/settings';
import { CopyStore, LogIn, redactUrl, type StoreCopyReport } from '@hortus/core';
import { type DataConfig, loadDataConfig } from './app/config.js';
import { openStore } from './app/data-commands.js';
import { Interrupted, UsageError } from './exit-codes.js';
import { type RunIo, type SignalSource } from './io.js';
import { bulkDeadlines } from './migrate.js';
import { databaseName } from './migrate/source.js';
import { type Output, table, type TextSink } from './output.js';
import { StoreCopyProgress } from './store-copy/progress.js';

export const STORE_COPY_DEFAULT_PAGE = 1000;
export const STORE_COPY_MAX_PAGE = 10_000;

export interface StoreCopyOptions {
  /** A MongoDB URI, or the path of a SQLite file. */
  readonly to: string;
  readonly force: boolean;
  readonly pageSize: number;
  /** Log in on the target with this e-mail and `password` after the copy. */
  readonly checkLogin?: { readonly email: string; readonly password: string };
}

export interface StoreCopyResult extends StoreCopyReport {
  readonly from: string;
  readonly to: string;
  /** The e-mail that logged in on the target, when --check-login was given. */
  loggedIn: string | null;
  seconds: number;
}

/** The environment without one variable (the source's database must not leak into the target's). */
function without(env: RunIo['env'], name: string, set: RunIo['env']): RunIo['env'] {
  return Object.fromEntries([...Object.entries(env).filter(([key]) => key !== name), ...Object.entries(set)]);
}

/** The configuration of the target: the source's settings, with the store `--to` names. */
function targetConfig(env: RunIo['env'], to: string): DataConfig {
  if (/^mongodb(\+srv)?:\/\//u.test(to)) {
    return loadDataConfig(without(env, 'MONGODB_DB', { STORE: 'mongodb', MONGODB_URI: to }));
  }
  if (to.trim() === '' || /^[a-z][a-z0-9+.-]*:\/\//iu.test(to)) {
    throw new UsageError(
      '--to must be a MongoDB URI (mongodb://host:27017/hortus) or the path of a SQLite file',
    );
  }
  const config = loadDataConfig(without(without(env, 'MONGODB_URI', {}), 'MONGODB_DB', { STORE: 'sqlite' }));
  if (config.sqlite === undefined)
    throw new UsageError('--to names a SQLite file, but SQLite is not usable here');
  return { ...config, sqlite: { ...config.sqlite, file: resolve(to) } };
}

/** Where a store lives, comparable across spellings: the SQLite file's real path, or Mongo hosts/database. */
function location(config: DataConfig): string {
  if (config.store === 'sqlite' && config.sqlite !== undefined) {
    const file = resolve(config.sqlite.file);
    try {
      return `sqlite:${realpathSync(file)}`;
    } catch {
      return `sqlite:${file}`;
    }
  }
  const uri = config.mongodbUri ?? '';
  return `mongodb:${databaseName(uri, config.mongo?.dbName ?? dbNameInUri(uri) ?? 'hortus')}`;
}

function describe(config: DataConfig): string {
  return config.store === 'sqlite' ? (config.sqlite?.file ?? '') : redactUrl(config.mongodbUri ?? '', 'path');
}

/**
 * A copy from a SQLite file a server is writing still works, but what the server writes meanwhile may be
 * missing on the target: a warning, not a refusal (a copy is also how one moves off a store under load).
 * MongoDB shows no cheap sign of a running server, so it gets none.
 */
async function warnWhenInUse(io: RunIo, config: DataConfig): Promise<void> {
  if (config.store !== 'sqlite' || config.sqlite === undefined) return;
  const { sqliteFileInUse } = await import('@hortus/adapter-sqlite');
  if (!sqliteFileInUse(config.sqlite.file)) return;
  io.stderr.write(
    `hortus: warning: ${config.sqlite.file} is open in another process (a running hortus serve?); ` +
      'what it writes during the copy may be missing on the target; stop it first for a complete copy\n',
  );
}

/** SIGINT/SIGTERM stop the copy after the page in flight; what was written stays, and is not written twice. */
function stopRequest(signals: SignalSource, stderr: TextSink): { requested(): boolean; stop(): void } {
  let requested = false;
  const handler = (): void => {
    if (!requested)
      stderr.write('hortus: stopping after the current page; run the command again to resume\n');
    requested = true;
  };
  for (const name of ['SIGINT', 'SIGTERM'] as const) signals.once(name, handler);
  return {
    requested: () => requested,
    stop: () => {
      for (const name of ['SIGINT', 'SIGTERM'] as const) signals.off(name, handler);
    },
  };
}

/** "Identical for every user" would be vacuous with no users: then it says there was nothing to compare. */
function passwordLine(result: StoreCopyResult): string {
  const users = result.resources.find((entry) => entry.resource === 'users');
  if (users !== undefined && users.source === 0) return 'password hashes: no users to compare';
  return result.credentialsMatch
    ? 'password hashes: identical on the target for every user'
    : 'password hashes: DIFFER on the target for some users';
}

function showReport(result: StoreCopyResult): string {
  const rows = result.resources.map((entry) => [
    entry.resource,
    entry.source,
    entry.target,
    entry.written,
    entry.complete ? (entry.target >= entry.source ? 'ok' : 'MISSING') : 'not done',
  ]);
  const lines = [
    `copied ${result.from} -> ${result.to} in ${result.seconds} s`,
    table(['resource', 'source', 'target', 'written', 'check'], rows),
    passwordLine(result),
  ];
  if (result.loggedIn !== null) lines.push(`log-in on the target: ${result.loggedIn} logged in`);
  if (result.interrupted) lines.push('interrupted: run the same command again to resume');
  return lines.join('\n');
}

/**
 * `hortus store copy`: the configured store (source) into the one `--to` names (target), each opened with
 * its own container. Refuses a store copied onto itself before anything is written.
 */
export async function runStoreCopy(io: RunIo, output: Output, options: StoreCopyOptions): Promise<void> {
  const { pageSize } = options;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > STORE_COPY_MAX_PAGE) {
    throw new UsageError(`--page-size must be a whole number from 1 to ${STORE_COPY_MAX_PAGE}`);
  }
  // Pages of thousands of records, and whole-store counts, not one request: MongoDB gets migrate's deadline.
  const env = bulkDeadlines(io.env);
  const sourceConfig = loadDataConfig(env);
  if (sourceConfig.store === 'memory') {
    throw new UsageError('store copy copies a persistent store; STORE=memory keeps nothing to copy');
  }
  const target = targetConfig(env, options.to);
  if (location(sourceConfig) === location(target)) {
    throw new UsageError(
      `--to names the store Hortus is configured with (${describe(target)}): a store cannot be copied onto itself`,
    );
  }
  await warnWhenInUse(io, sourceConfig);
  const started = Date.now();
  const source = await openStore(sourceConfig);
  try {
    const opened = await openStore(target);
    const stop = stopRequest(io.signals ?? process, io.stderr);
    try {
      const copy = new CopyStore(source.repositories(), opened.repositories(), {
        pageSize,
        force: options.force,
        stopRequested: stop.requested,
      });
      const report = await copy.execute(new StoreCopyProgress(io.stderr));
      const result: StoreCopyResult = {
        from: describe(sourceConfig),
        to: describe(target),
        ...report,
        loggedIn: null,
        seconds: Math.round((Date.now() - started) / 100) / 10,
      };
      if (options.checkLogin !== undefined && report.complete) {
        const login = opened.useCase(LogIn);
        const { email, password } = options.checkLogin;
        await login.execute({ email, password }, 'hortus store copy');
        result.loggedIn = email;
      }
      output.result(result, showReport);
      if (report.interrupted) {
        throw new Interrupted('interrupted: run the same command again to resume where it stopped');
      }
    } finally {
      stop.stop();
      await opened.close();
    }
  } finally {
    await source.close();
  }
}
