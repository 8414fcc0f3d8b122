import { isUnavailableError, schemaVersionCollection } from '@hortus/adapter-mongo';
import { dbNameInUri } from '@hortus/adapter-mongo/settings';
import {
  CopyLegacyRecords,
  redactUrl,
  coreLimitsFromEnv,
  createCoreModule,
  defaultCoreSettings,
  InvalidInputError,
  isValidTimeZone,
  legacyCollections,
  MigrationCheckpoints,
  RecordCutOver,
  StoreUnavailableError,
  WallClockTimes,
} from '@hortus/core';
import { Container } from 'inversify';
import { type Db } from 'mongodb';
import { loadDataConfig } from './app/config.js';
import { Interrupted, UsageError } from './exit-codes.js';
import { MIGRATE_MAX_BATCH } from './migrate/batch.js';
import { CollectionCopier, type MigrateOptions, type Target } from './migrate/copier.js';
import { Progress } from './progress.js';
import { type MigrationReport, newCollectionReport, showReport } from './migrate/report.js';
import { databaseName, openSource } from './migrate/source.js';
import { type Output, type TextSink } from './output.js';
import { type RunIo, type SignalSource } from './io.js';
import { withUseCases } from './app/data-commands.js';

export { DUPLICATE_WINDOW, type MigrateOptions } from './migrate/copier.js';
export {
  type CollectionReport,
  type Listed,
  MAX_LISTED_PER_COLLECTION,
  type MigrationReport,
} from './migrate/report.js';

export { MIGRATE_DEFAULT_BATCH, MIGRATE_MAX_BATCH } from './migrate/batch.js';

/** Listens for SIGINT/SIGTERM while the copy runs: the batch in flight finishes, its checkpoint is kept. */
function stopRequest(
  signals: SignalSource,
  stderr: TextSink,
): { requested(): boolean; stopListening(): void } {
  let requested = false;
  const handler = (): void => {
    if (!requested)
      stderr.write('hortus: stopping after the current batch; run the command again to resume\n');
    requested = true;
  };
  const names = ['SIGINT', 'SIGTERM'] as const;
  for (const name of names) signals.once(name, handler);
  return {
    requested: () => requested,
    stopListening: () => {
      for (const name of names) signals.off(name, handler);
    },
  };
}

/** The report so far of a run that failed, by its error: it is printed before the error is. */
const reportsOfFailedRuns = new WeakMap<Error, MigrationReport>();

/**
 * The deadline of one store operation during a migration: batches of thousands of records, not one
 * request. MONGODB_TIMEOUT_MS still applies when it is longer (or 0, none).
 */
export const MIGRATE_STORE_TIMEOUT_MS = 120_000;

export function bulkDeadlines(env: RunIo['env']): RunIo['env'] {
  const given = env['MONGODB_TIMEOUT_MS']?.trim();
  const configured = given === undefined || given === '' ? undefined : Number(given);
  if (configured === 0 || (configured !== undefined && configured >= MIGRATE_STORE_TIMEOUT_MS)) return env;
  return { ...env, MONGODB_TIMEOUT_MS: String(MIGRATE_STORE_TIMEOUT_MS) };
}

/** The copy onto a new, empty in-memory store: what a dry run runs records through, then forgets. */
async function dryRunShadow(): Promise<CopyLegacyRecords> {
  const { memoryStoreModule } = await import('@hortus/adapter-memory');
  const container = new Container();
  container.load(createCoreModule(defaultCoreSettings), memoryStoreModule());
  return container.get(CopyLegacyRecords);
}

/** Copies every collection of the original (see legacyCollections) and answers the report. */
export async function migrate(
  io: RunIo,
  options: MigrateOptions,
  source: Db,
  sourceName: string,
  target: Target | undefined,
  latest = Number.POSITIVE_INFINITY,
): Promise<MigrationReport> {
  const started = Date.now();
  const present = new Set(
    (await source.listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name),
  );
  // Hortus's own MongoDB has groups, users and devices too: its schema versions tell it from the original's.
  if (present.has(schemaVersionCollection.name)) {
    throw new UsageError(
      `the database ${source.databaseName} at ${redactUrl(options.from, 'path')} is a Hortus database ` +
        `(it has Hortus's ${schemaVersionCollection.name}), not the original service's: --from must name ` +
        "the original's database; to copy one Hortus store into another use `hortus store copy`",
    );
  }
  if (!legacyCollections.some((name) => present.has(name))) {
    throw new UsageError(
      `the database ${source.databaseName} at ${redactUrl(options.from, 'path')} holds none of the original ` +
        `service's collections (looked for: ${legacyCollections.join(', ')}); ` +
        'name its database in the URI: mongodb://host:27017/<database>',
    );
  }
  const times = options.timeZone === undefined ? undefined : new WallClockTimes(options.timeZone);
  const report: MigrationReport = {
    source: redactUrl(options.from, 'path'),
    dryRun: options.dryRun,
    timeZone: options.timeZone ?? null,
    times:
      options.timeZone === undefined
        ? 'kept as stored: the original stored local time labelled UTC; give --time-zone to convert them'
        : `read as local time in ${options.timeZone} and stored as UTC`,
    complete: false,
    interrupted: false,
    failure: null,
    cutOver: null,
    seconds: 0,
    collections: legacyCollections.map((name) => newCollectionReport(name, present.has(name))),
  };
  const stop = stopRequest(io.signals ?? process, io.stderr);
  const copier = new CollectionCopier(
    source,
    sourceName,
    target,
    options,
    times,
    new Progress(io.stderr, { event: 'migrate.progress', unit: 'documents' }),
    stop.requested,
    latest,
    target === undefined ? await dryRunShadow() : undefined,
  );
  try {
    for (const collection of report.collections) {
      if (!collection.found) {
        collection.complete = true;
        continue;
      }
      if (!(await copier.copy(collection))) {
        report.interrupted = true;
        break;
      }
      if (collection.collection === 'actions' && target !== undefined) {
        report.cutOver = (await target.cutOver.execute()).toISOString();
      }
    }
  } catch (error) {
    const stopped = isUnavailableError(error)
      ? new StoreUnavailableError(
          `lost the source database: ${(error as Error).message}; run the command again to resume`,
        )
      : error;
    if (error instanceof StoreUnavailableError) {
      error.message = `${error.message}; run the command again to resume`;
    }
    if (stopped instanceof Error) {
      report.failure = stopped.message;
      report.seconds = Math.round((Date.now() - started) / 100) / 10;
      reportsOfFailedRuns.set(stopped, report);
    }
    throw stopped;
  } finally {
    stop.stopListening();
  }
  report.complete = report.collections.every((collection) => collection.complete);
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  return report;
}

/** `hortus migrate`: options are checked before either database is opened. */
export async function runMigrate(io: RunIo, output: Output, options: MigrateOptions): Promise<void> {
  if (options.timeZone !== undefined && !isValidTimeZone(options.timeZone)) {
    throw new UsageError(
      `--time-zone must be an IANA time zone such as Europe/Berlin, got "${options.timeZone}"`,
    );
  }
  const { batchSize } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MIGRATE_MAX_BATCH) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${MIGRATE_MAX_BATCH}`);
  }
  const { client, db } = await openSource(options.from);
  const sourceName = databaseName(options.from, db.databaseName);
  try {
    if (io.container === undefined && !options.dryRun) {
      const config = loadDataConfig(io.env);
      const targetDb = config.mongo?.dbName ?? dbNameInUri(config.mongodbUri ?? '') ?? 'hortus';
      if (
        config.store === 'mongodb' &&
        config.mongodbUri !== undefined &&
        databaseName(config.mongodbUri, targetDb) === sourceName
      ) {
        throw new UsageError(
          '--from names the database Hortus itself uses: the original must stay untouched',
        );
      }
    }
    const latest = Date.now() + coreLimitsFromEnv(io.env).maxClockSkewMs;
    let report: MigrationReport;
    try {
      report = options.dryRun
        ? await migrate(io, options, db, sourceName, undefined, latest)
        : await withUseCases({ ...io, env: bulkDeadlines(io.env) }, 'migrate', (useCase) =>
            migrate(
              io,
              options,
              db,
              sourceName,
              {
                copy: useCase(CopyLegacyRecords),
                checkpoints: useCase(MigrationCheckpoints),
                cutOver: useCase(RecordCutOver),
              },
              latest,
            ),
          );
    } catch (error) {
      const soFar = error instanceof Error ? reportsOfFailedRuns.get(error) : undefined;
      if (soFar !== undefined) output.result(soFar, showReport);
      throw error;
    }
    output.result(report, showReport);
    if (report.interrupted) {
      throw new Interrupted('interrupted: run the same command again to resume where it stopped');
    }
    const rejected = report.collections.reduce((sum, c) => sum + c.rejected, 0);
    if (rejected > 0) {
      throw new InvalidInputError(
        `${rejected} document${rejected === 1 ? '' : 's'} rejected (listed in the report); ` +
          `everything else was ${options.dryRun ? 'checked' : 'copied'}`,
      );
    }
  } finally {
    await client.close();
  }
}
