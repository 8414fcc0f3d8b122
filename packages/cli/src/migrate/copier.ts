import {
  type Copied,
  emailKey,
  type ImportedUser,
  type Converted,
  type CopyLegacyRecords,
  type ImportedNotification,
  legacyAction,
  legacyAlarm,
  legacyChartRecord,
  legacyDevice,
  type LegacyDocument,
  legacyGroup,
  legacyId,
  legacyNotification,
  legacyReading,
  legacyUser,
  type MigrationCheckpoints,
  type RecordCutOver,
  skippedAlarm,
  type NewReading,
  readingKey,
  type WallClockTimes,
} from '@hortus/core';
import { type Db } from 'mongodb';
import { type Progress, type ProgressReport } from '../progress.js';
import { type CollectionReport, count, isRejection, list, reject } from './report.js';
import { readBatch } from './source.js';

/** Readings remembered to tell a duplicate in the source from one stored before: bounded, so memory stays flat. */
export const DUPLICATE_WINDOW = 100_000;

export interface MigrateOptions {
  readonly from: string;
  readonly timeZone?: string;
  readonly dryRun: boolean;
  readonly batchSize: number;
  /** Bring over values and chart settings that changed in the original since Hortus got its copy. */
  readonly update: boolean;
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

/** The target side: core use cases on the configured store; absent in a dry run, which writes nothing. */
export interface Target {
  readonly copy: CopyLegacyRecords;
  readonly checkpoints: MigrationCheckpoints;
  readonly cutOver: RecordCutOver;
}

/**
 * Copies one collection of the original in its natural order, batch by batch, writing a checkpoint (how
 * many documents were copied, and the last one's `_id`) after each.
 */
/** A collection's progress: documents read, for people and for the JSON line (`read`). */
function readProgress(read: number): ProgressReport {
  return { done: read, text: `${read} read`, fields: { read } };
}

export class CollectionCopier {
  private readonly recent = new RecentKeys(DUPLICATE_WINDOW);
  /** Notifications the original's hourly check stored (ignore active/passive), in this run. */
  private checkRecords = 0;
  /** The original's user id to the Hortus id of users copied or matched by `_id`: chart records follow them. */
  private readonly owners = new Map<string, string>();
  /** The e-mails of the users read, ignoring case: tells accounts that differ only in case. */
  private readonly emails = new Map<string, { id: string; email: string }>();

  constructor(
    private readonly source: Db,
    private readonly sourceName: string,
    private readonly target: Target | undefined,
    private readonly options: MigrateOptions,
    private readonly times: WallClockTimes | undefined,
    private readonly progress: Progress,
    private readonly stopRequested: () => boolean,
    /** Readings later than this (ms: the run's clock plus MAX_CLOCK_SKEW_MS) are refused. */
    private readonly latest: number,
    /**
     * In a dry run: the copy onto an empty in-memory store, for the few records of groups, users, devices,
     * actions and charts, so that the dry run counts what a real run into an empty store writes.
     */
    private readonly shadow?: CopyLegacyRecords,
  ) {}

  /** Where groups, users, devices, actions and charts are copied: the target, or a dry run's shadow. */
  private get records(): CopyLegacyRecords | undefined {
    return this.target?.copy ?? this.shadow;
  }

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
    this.progress.start({
      label: collection,
      total: await documents.estimatedDocumentCount(),
      fields: { collection },
    });
    this.progress.update(readProgress(0));
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
        this.progress.update(readProgress(report.read));
        if (this.stopRequested()) {
          this.progress.update(readProgress(report.read), true);
          return false;
        }
      }
    } finally {
      await cursor.close().catch(() => undefined);
    }
    this.progress.update(readProgress(report.read), true);
    this.summarize(report);
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
          return this.records?.copyChartRecord(record, this.owners.get(record.userId), this.options.update);
        });
      case 'groups':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyGroup(document), (group) =>
            this.records?.copyGroup(group, this.options.update),
          ),
        );
      case 'users':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyUser(document), (user) =>
            this.copyUser(report, document, user),
          ),
        );
      case 'devices':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyDevice(document), (device) =>
            this.records?.copyDevice(device),
          ),
        );
      case 'actions':
        return this.eachDocument(report, batch, (document) =>
          this.copyOne(report, document, legacyAction(document), (action) =>
            this.records?.copyAction(action, this.options.update),
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
    write: (record: T) => Promise<Copied | undefined> | undefined,
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
        reading = legacyReading(document, this.times, this.latest);
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
        if (report.collection === 'alarms') {
          const skipped = skippedAlarm(document);
          if (skipped !== undefined) {
            report.skipped += 1;
            list(report.notes, legacyId(document), [skipped]);
            continue;
          }
        }
        const { record, notes } = convert(document);
        list(report.notes, legacyId(document), notes);
        if (record.ignore === 'active' || record.ignore === 'passive') this.checkRecords += 1;
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

  private summarize(report: CollectionReport): void {
    if (report.collection === 'datas' && this.times !== undefined && this.times.secondPass > 0) {
      report.summary.push(
        `${this.times.secondPass} readings of the hour repeated when the clocks went back were read as its ` +
          'second pass (in _id order) and stored at the later instant',
      );
    }
    if (report.collection === 'notifications' && this.checkRecords > 0) {
      report.summary.push(
        `${this.checkRecords} records of the original's hourly check (ignore "active" or "passive"), ` +
          'which its list never showed, are kept as not open: they read as ignored',
      );
    }
  }

  /**
   * Users whose e-mails differ only in case were separate accounts in the original: the dry run, which
   * does not consult the target, notes them from what it has read; a real run also meets them in Hortus.
   */
  private async copyUser(
    report: CollectionReport,
    document: LegacyDocument,
    user: ImportedUser,
  ): Promise<Copied | undefined> {
    const id = legacyId(document);
    const key = emailKey(user.email);
    const seen = this.emails.get(key);
    if (seen === undefined) this.emails.set(key, { id, email: user.email });
    if (this.target === undefined) {
      if (seen !== undefined && seen.email !== user.email) {
        list(report.notes, id, [
          `e-mail differs only in case from user ${seen.id} (${seen.email}): will be kept as its own account`,
        ]);
      }
      // The shadow's outcome counts; its notes name in-memory ids, so the note above stands for them.
      const shadowed = await this.shadow?.copyUser(user);
      if (shadowed?.userId !== undefined) this.owners.set(id, shadowed.userId);
      return shadowed === undefined ? undefined : { outcome: shadowed.outcome, notes: [] };
    }
    const copied = await this.target.copy.copyUser(user);
    if (copied.userId !== undefined) this.owners.set(id, copied.userId);
    return copied;
  }
}
