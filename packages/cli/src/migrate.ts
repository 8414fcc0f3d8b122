import { isUnavailableError } from '@hortus/adapter-mongo';
import {
  type Copied,
  CopyLegacyRecords,
  type Converted,
  InvalidInputError,
  isDomainError,
  isValidTimeZone,
  legacyAction,
  legacyAlarm,
  legacyChartRecord,
  type LegacyCollection,
  legacyCollections,
  legacyDevice,
  type LegacyDocument,
  legacyGroup,
  legacyId,
  legacyNotification,
  legacyReading,
  legacyTargets,
  legacyUser,
  MigrationCheckpoints,
  type NewReading,
  readingKey,
  StoreUnavailableError,
  WallClockTimes,
  type ImportedNotification,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { type Db, type Document, type FindCursor, MongoClient, ObjectId } from 'mongodb';
import { loadConfig } from './app/config.js';
import { withExamples } from './commands/shared.js';
import { Interrupted, UsageError } from './exit-codes.js';
import { Output, type TextSink, table } from './output.js';
import { type RunIo, type SignalSource } from './io.js';
import { withUseCases } from './store.js';

export const MIGRATE_DEFAULT_BATCH = 5000;
export const MIGRATE_MAX_BATCH = 10_000;
/** Rejections and notes listed per collection; a wholly broken collection must not fill memory. */
export const MAX_LISTED_PER_COLLECTION = 1000;
/** Readings remembered to tell a duplicate in the source from one stored before: bounded, so memory stays flat. */
export const DUPLICATE_WINDOW = 100_000;
const DEFAULT_SOURCE_TIMEOUT_MS = 5000;

export interface MigrateOptions {
  readonly from: string;
  readonly timeZone?: string;
  readonly dryRun: boolean;
  readonly batchSize: number;
}

export interface Listed {
  /** The source document's `_id`. */
  readonly id: string;
  readonly text: string;
}

export interface CollectionReport {
  readonly collection: LegacyCollection;
  /** Where it goes in Hortus; null: not copied. */
  readonly into: string | null;
  /** Whether the source has the collection. */
  readonly found: boolean;
  read: number;
  /** Newly stored (in a dry run: would be stored, the target not consulted). */
  written: number;
  /** Stored by an earlier run or present in Hortus before. */
  alreadyThere: number;
  /** Joined with a record Hortus had (a group of the same name, a chart record with some charts). */
  merged: number;
  /** Readings whose (group, topic, time) came earlier in this run: kept once. */
  duplicates: number;
  rejected: number;
  /** Where this run started: after this source `_id` (an interrupted run's checkpoint). */
  resumedAfter?: string;
  complete: boolean;
  readonly rejections: Listed[];
  readonly notes: Listed[];
}

export interface MigrationReport {
  readonly source: string;
  readonly dryRun: boolean;
  readonly timeZone: string | null;
  /** How reading times were treated, in words. */
  readonly times: string;
  complete: boolean;
  interrupted: boolean;
  seconds: number;
  readonly collections: CollectionReport[];
}

/** The URI with its credentials masked, for messages and the report. */
export function redactMongoUri(uri: string): string {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/)[^@/]*@/u, '$1***@');
}

/** Hosts and database of a URI, without credentials or options: names a database across runs. */
function databaseName(uri: string, dbName: string): string {
  const hosts = /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]*)/u.exec(uri)?.[1] ?? '';
  return `${hosts.toLowerCase()}/${dbName}`;
}

function dbNameInUri(uri: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/u.exec(uri)?.[1];
  return path === undefined || path === '' ? undefined : decodeURIComponent(path);
}

/** Connects to the original's database; unreachable is exit 5, a malformed URI exit 2. */
async function openSource(uri: string): Promise<{ client: MongoClient; db: Db }> {
  if (!/^mongodb(\+srv)?:\/\/\S+$/u.test(uri)) {
    throw new UsageError('--from must be a MongoDB URI: mongodb://host:27017/<database of the original>');
  }
  let client: MongoClient;
  try {
    client = new MongoClient(uri, {
      appName: 'hortus-migrate',
      ...(/[?&]serverSelectionTimeoutMS=/iu.test(uri)
        ? {}
        : { serverSelectionTimeoutMS: DEFAULT_SOURCE_TIMEOUT_MS }),
    });
  } catch (error) {
    throw new UsageError(`--from is not a usable MongoDB URI: ${(error as Error).message}`);
  }
  try {
    await client.connect();
    return { client, db: client.db() };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new StoreUnavailableError(
      `cannot reach the source database at ${redactMongoUri(uri)}: ${(error as Error).message}`,
    );
  }
}

/** Remembers the last keys seen, forgetting the oldest: duplicates in the original are close in time. */
class RecentKeys {
  private readonly keys = new Set<string>();
  private readonly order: string[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  /** True when the key was seen within the window; remembers it otherwise. */
  seen(key: string): boolean {
    if (this.keys.has(key)) return true;
    if (this.order.length < this.capacity) this.order.push(key);
    else {
      this.keys.delete(this.order[this.next] as string);
      this.order[this.next] = key;
      this.next = (this.next + 1) % this.capacity;
    }
    this.keys.add(key);
    return false;
  }
}

/**
 * A bar per collection, redrawn in place when stderr is a terminal; otherwise JSON lines: one when a
 * collection starts, at most one a second while it runs, and one when it ends.
 */
export class MigrationProgress {
  private collection = '';
  private total = 0;
  private startedAt = 0;
  private lastShown = 0;

  constructor(
    private readonly sink: TextSink,
    private readonly now: () => number = Date.now,
  ) {}

  start(collection: string, total: number): void {
    this.collection = collection;
    this.total = total;
    this.startedAt = this.now();
    this.lastShown = 0;
    this.show(0, false);
  }

  update(read: number, final = false): void {
    const interval = this.sink.isTTY === true ? 100 : 1000;
    if (final || this.now() - this.lastShown >= interval) this.show(read, final);
  }

  private show(read: number, final: boolean): void {
    this.lastShown = this.now();
    const seconds = (this.now() - this.startedAt) / 1000;
    const perSecond = seconds > 0 ? Math.round(read / seconds) : 0;
    const total = Math.max(this.total, read);
    const percent = total === 0 ? 100 : Math.min(100, Math.floor((read / total) * 100));
    if (this.sink.isTTY === true) {
      const width = 30;
      const filled = Math.round((percent / 100) * width);
      this.sink.write(
        `\r${this.collection.padEnd(13)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` +
          `${String(percent).padStart(3)}%  ${read}/${total}  ${perSecond}/s${final ? '\n' : ''}`,
      );
      return;
    }
    this.sink.write(
      `${JSON.stringify({
        event: 'migrate.progress',
        collection: this.collection,
        read,
        total,
        percent,
        perSecond,
        ...(final ? { done: true } : {}),
      })}\n`,
    );
  }
}

/** The target side: core use cases on the configured store; absent in a dry run, which writes nothing. */
interface Target {
  readonly copy: CopyLegacyRecords;
  readonly checkpoints: MigrationCheckpoints;
}

function newCollectionReport(collection: LegacyCollection, found: boolean): CollectionReport {
  return {
    collection,
    into: legacyTargets[collection] ?? null,
    found,
    read: 0,
    written: 0,
    alreadyThere: 0,
    merged: 0,
    duplicates: 0,
    rejected: 0,
    complete: false,
    rejections: [],
    notes: [],
  };
}

function list(into: Listed[], id: string, texts: readonly string[]): void {
  for (const text of texts) if (into.length < MAX_LISTED_PER_COLLECTION) into.push({ id, text });
}

/** A document the target cannot take is rejected; a store that went away stops the run. */
function isRejection(error: unknown): error is Error {
  return isDomainError(error) && (error.code === 'INVALID_INPUT' || error.code === 'CONFLICT');
}

function reject(report: CollectionReport, document: LegacyDocument, error: Error): void {
  report.rejected += 1;
  list(report.rejections, legacyId(document), [error.message]);
}

function count(report: CollectionReport, document: LegacyDocument, copied: Copied): void {
  if (copied.outcome === 'written') report.written += 1;
  else if (copied.outcome === 'merged') report.merged += 1;
  else report.alreadyThere += 1;
  list(report.notes, legacyId(document), copied.notes);
}

async function readBatch(cursor: FindCursor<Document>, size: number): Promise<LegacyDocument[]> {
  const documents: LegacyDocument[] = [];
  while (documents.length < size && (await cursor.hasNext())) {
    documents.push(...cursor.readBufferedDocuments(size - documents.length));
  }
  return documents;
}

/** A source `_id` given as text: the original's are ObjectIds. */
function sourceId(text: string): ObjectId | string {
  return /^[0-9a-f]{24}$/u.test(text) ? ObjectId.createFromHexString(text) : text;
}

/**
 * Copies one collection of the original in its natural order, batch by batch, writing a checkpoint (how
 * many documents were copied, and the last one's `_id`) after each.
 */
class CollectionCopier {
  private readonly recent = new RecentKeys(DUPLICATE_WINDOW);

  constructor(
    private readonly source: Db,
    private readonly sourceName: string,
    private readonly target: Target | undefined,
    private readonly options: MigrateOptions,
    private readonly times: WallClockTimes | undefined,
    private readonly progress: MigrationProgress,
    private readonly stopRequested: () => boolean,
  ) {}

  /** Answers false when a stop was requested before the collection was done. */
  async copy(report: CollectionReport): Promise<boolean> {
    const { collection } = report;
    const documents = this.source.collection(collection);
    if (report.into === null) {
      report.read = await documents.countDocuments();
      report.complete = true;
      return true;
    }
    const start = await this.resumePoint(report);
    this.progress.start(collection, await documents.estimatedDocumentCount());
    // Natural order, no sort: MongoDB reads it straight off the collection, where a sort on a server
    // without a usable index (FerretDB sorts in memory) would load the whole collection first.
    const cursor = documents.find({}, { batchSize: this.options.batchSize, skip: start });
    let position = start;
    try {
      let next = readBatch(cursor, this.options.batchSize);
      for (;;) {
        const batch = await next;
        if (batch.length === 0) break;
        // The next batch is read while this one is written.
        next = readBatch(cursor, this.options.batchSize);
        next.catch(() => undefined);
        report.read += batch.length;
        await this.copyBatch(report, batch);
        position += batch.length;
        const last = batch[batch.length - 1] as LegacyDocument;
        await this.target?.checkpoints.save(this.sourceName, collection, { after: legacyId(last), position });
        this.progress.update(report.read);
        if (this.stopRequested()) {
          this.progress.update(report.read, true);
          return false;
        }
      }
    } finally {
      await cursor.close().catch(() => undefined);
    }
    this.progress.update(report.read, true);
    // Done: the next run reads everything again, finding it stored.
    await this.target?.checkpoints.save(this.sourceName, collection, undefined);
    report.complete = true;
    return true;
  }

  /**
   * Where an interrupted run stopped: the checkpoint's position, provided the document just before it is
   * still the one the checkpoint names (the source was not changed in between); else the start, which is
   * slower but still right, since nothing is stored twice.
   */
  private async resumePoint(report: CollectionReport): Promise<number> {
    const checkpoint = await this.target?.checkpoints.get(this.sourceName, report.collection);
    if (checkpoint === undefined) return 0;
    const [last] = await this.source
      .collection(report.collection)
      .find({}, { skip: checkpoint.position - 1, limit: 1, projection: { _id: 1 } })
      .toArray();
    if (last === undefined || legacyId(last) !== checkpoint.after) {
      list(report.notes, checkpoint.after, [
        'the source changed since the interrupted run: this collection was read from its start again',
      ]);
      return 0;
    }
    report.resumedAfter = checkpoint.after;
    return checkpoint.position;
  }

  private async copyBatch(report: CollectionReport, batch: readonly LegacyDocument[]): Promise<void> {
    switch (report.collection) {
      case 'datas':
        return this.copyReadings(report, batch);
      case 'notifications':
        return this.copyNotifications(report, batch, legacyNotification);
      case 'alarms':
        return this.copyNotifications(report, batch, legacyAlarm);
      case 'history':
        return this.eachDocument(report, batch, async (document) => {
          const { record, notes } = legacyChartRecord(document, new Date());
          list(report.notes, legacyId(document), notes);
          const ownerEmail = await this.emailOfSourceUser(record.userId);
          return this.target?.copy.copyChartRecord(record, ownerEmail);
        });
      case 'groups':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyGroup(document), (group) =>
            this.target?.copy.copyGroup(group),
          ),
        );
      case 'users':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyUser(document), (user) => this.target?.copy.copyUser(user)),
        );
      case 'devices':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, { record: legacyDevice(document), notes: [] }, (device) =>
            this.target?.copy.copyDevice(device),
          ),
        );
      case 'actions':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyAction(document), (action) =>
            this.target?.copy.copyAction(action),
          ),
        );
      case 'tokens':
        return undefined;
    }
  }

  private async copyOne<T>(
    report: CollectionReport,
    document: LegacyDocument,
    converted: Converted<T>,
    write: (record: T) => Promise<Copied> | undefined,
  ): Promise<Copied | undefined> {
    list(report.notes, legacyId(document), converted.notes);
    return write(converted.record);
  }

  /** One document at a time: groups, users, devices, actions and chart records are few. */
  private async eachDocument(
    report: CollectionReport,
    batch: readonly LegacyDocument[],
    copy: (document: LegacyDocument) => Promise<Copied | undefined>,
  ): Promise<void> {
    for (const document of batch) {
      try {
        const copied = await copy(document);
        // A dry run converts only: what would be written.
        count(report, document, copied ?? { outcome: 'written', notes: [] });
      } catch (error) {
        if (!isRejection(error)) throw error;
        reject(report, document, error);
      }
    }
  }

  private async copyReadings(report: CollectionReport, batch: readonly LegacyDocument[]): Promise<void> {
    const readings: NewReading[] = [];
    for (const document of batch) {
      let reading: NewReading;
      try {
        reading = legacyReading(document, this.times);
      } catch (error) {
        if (!isRejection(error)) throw error;
        reject(report, document, error);
        continue;
      }
      if (this.recent.seen(readingKey(reading))) report.duplicates += 1;
      else readings.push(reading);
    }
    const stored =
      this.target === undefined ? readings.length : await this.target.copy.copyReadings(readings);
    report.written += stored;
    report.alreadyThere += readings.length - stored;
  }

  private async copyNotifications(
    report: CollectionReport,
    batch: readonly LegacyDocument[],
    convert: (document: LegacyDocument) => Converted<ImportedNotification>,
  ): Promise<void> {
    const notifications: ImportedNotification[] = [];
    for (const document of batch) {
      try {
        const { record, notes } = convert(document);
        list(report.notes, legacyId(document), notes);
        notifications.push(record);
      } catch (error) {
        if (!isRejection(error)) throw error;
        reject(report, document, error);
      }
    }
    const stored =
      this.target === undefined
        ? notifications.length
        : await this.target.copy.copyNotifications(notifications);
    report.written += stored;
    report.alreadyThere += notifications.length - stored;
  }

  /** The e-mail of the original's user with that id: chart records follow their owner by e-mail. */
  private async emailOfSourceUser(userId: string): Promise<string | undefined> {
    const filter: Document = { _id: sourceId(userId) };
    const user = await this.source.collection('users').findOne(filter, { projection: { email: 1 } });
    const email = user?.['email'];
    return typeof email === 'string' ? email.trim() : undefined;
  }
}

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

/** Copies every collection of the original (see legacyCollections) and answers the report. */
export async function migrate(
  io: RunIo,
  options: MigrateOptions,
  source: Db,
  sourceName: string,
  target: Target | undefined,
): Promise<MigrationReport> {
  const started = Date.now();
  const present = new Set(
    (await source.listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name),
  );
  if (!legacyCollections.some((name) => present.has(name))) {
    throw new UsageError(
      `the database ${source.databaseName} at ${redactMongoUri(options.from)} holds none of the original ` +
        `service's collections (looked for: ${legacyCollections.join(', ')}); ` +
        'name its database in the URI: mongodb://host:27017/<database>',
    );
  }
  const times = options.timeZone === undefined ? undefined : new WallClockTimes(options.timeZone);
  const report: MigrationReport = {
    source: redactMongoUri(options.from),
    dryRun: options.dryRun,
    timeZone: options.timeZone ?? null,
    times:
      options.timeZone === undefined
        ? 'kept as stored: the original stored local time labelled UTC; give --time-zone to convert them'
        : `read as local time in ${options.timeZone} and stored as UTC`,
    complete: false,
    interrupted: false,
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
    new MigrationProgress(io.stderr),
    stop.requested,
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
    }
  } catch (error) {
    if (isUnavailableError(error)) {
      throw new StoreUnavailableError(
        `lost the source database: ${(error as Error).message}; run the command again to resume`,
      );
    }
    if (error instanceof StoreUnavailableError) {
      error.message = `${error.message}; run the command again to resume`;
    }
    throw error;
  } finally {
    stop.stopListening();
  }
  report.complete = report.collections.every((collection) => collection.complete);
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  return report;
}

function showReport(report: MigrationReport): string {
  const lines = [
    `${report.dryRun ? 'Dry run (nothing written) from' : 'Migrated from'} ${report.source} ` +
      `in ${report.seconds} s${report.interrupted ? ': INTERRUPTED, run the same command again to resume' : ''}.`,
    `Reading times: ${report.times}.`,
    '',
    table(
      ['COLLECTION', 'INTO', 'READ', 'WRITTEN', 'ALREADY THERE', 'MERGED', 'DUPLICATES', 'REJECTED'],
      report.collections.map((c) =>
        !c.found
          ? [c.collection, 'not in the source', '', '', '', '', '', '']
          : c.into === null
            ? [c.collection, 'not copied', c.read, '', '', '', '', '']
            : [c.collection, c.into, c.read, c.written, c.alreadyThere, c.merged, c.duplicates, c.rejected],
      ),
    ),
  ];
  const resumed = report.collections.filter((c) => c.resumedAfter !== undefined);
  for (const c of resumed) lines.push(`${c.collection}: resumed after _id ${c.resumedAfter}.`);
  const listing = (
    title: string,
    pick: (c: CollectionReport) => Listed[],
    total: (c: CollectionReport) => number,
  ): void => {
    const rows = report.collections.flatMap((c) => pick(c).map((item) => [c.collection, item.id, item.text]));
    if (rows.length === 0) return;
    lines.push('', `${title}:`, table(['COLLECTION', '_ID', 'REASON'], rows));
    for (const c of report.collections) {
      const unlisted = total(c) - pick(c).length;
      if (unlisted > 0) lines.push(`... and ${unlisted} more in ${c.collection}.`);
    }
  };
  listing(
    'Rejected',
    (c) => c.rejections,
    (c) => c.rejected,
  );
  listing(
    'Notes',
    (c) => c.notes,
    (c) => c.notes.length,
  );
  return lines.join('\n');
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
      const config = loadConfig(io.env);
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
    const report = options.dryRun
      ? await migrate(io, options, db, sourceName, undefined)
      : await withUseCases(io, 'migrate', (useCase) =>
          migrate(io, options, db, sourceName, {
            copy: useCase(CopyLegacyRecords),
            checkpoints: useCase(MigrationCheckpoints),
          }),
        );
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

export function registerMigrateCommand(program: Command, io: RunIo): void {
  withExamples(
    program
      .command('migrate')
      .description(
        "copy the original service's database into the configured store: readings, groups, users (with " +
          'their password hashes), actions, devices, notifications, alarms and history charts; safe to run ' +
          'again, resumes where an interrupted run stopped, never writes to the source',
      )
      .requiredOption(
        '--from <uri>',
        'MongoDB URI of the original database, e.g. mongodb://old-host:27017/greenhouse',
      )
      .option(
        '--time-zone <zone>',
        'IANA zone the boxes ran in; their stored local times are converted to UTC',
      )
      .option('--dry-run', 'read and check everything, write nothing')
      .addOption(
        new Option('--batch-size <n>', `documents per batch (at most ${MIGRATE_MAX_BATCH})`)
          .default(MIGRATE_DEFAULT_BATCH)
          .argParser((text) => Number(text)),
      )
      .action(
        async (
          options: { from: string; timeZone?: string; dryRun?: boolean; batchSize: number },
          command: Command,
        ) => {
          const json = command.optsWithGlobals<{ json?: boolean }>().json === true;
          await runMigrate(io, new Output(io.stdout, json), {
            from: options.from,
            dryRun: options.dryRun === true,
            batchSize: options.batchSize,
            ...(options.timeZone === undefined ? {} : { timeZone: options.timeZone }),
          });
        },
      ),
    'MONGODB_URI=mongodb://localhost:27017/hortus hortus migrate --from mongodb://localhost:27017/greenhouse --time-zone Europe/Berlin',
    'hortus migrate --from mongodb://localhost:27017/greenhouse --dry-run --json > report.json',
  );
}
