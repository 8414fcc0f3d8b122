import {
  type Copied,
  isDomainError,
  type LegacyCollection,
  type LegacyDocument,
  legacyId,
  legacyTargets,
} from '@hortus/core';
import { table } from '../output.js';

/** Rejections and notes listed per collection; a wholly broken collection must not fill memory. */
export const MAX_LISTED_PER_COLLECTION = 1000;

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
  /** Left out on purpose, each with a note (the original's group-less alarm record). */
  skipped: number;
  /** Where this run started: after this source `_id` (an interrupted run's checkpoint). */
  resumedAfter?: string;
  complete: boolean;
  readonly rejections: Listed[];
  readonly notes: Listed[];
  /** What the run did to the collection as a whole (a repeated hour, records that are not open). */
  readonly summary: string[];
}

export interface MigrationReport {
  readonly source: string;
  readonly dryRun: boolean;
  readonly timeZone: string | null;
  /** How reading times were treated, in words. */
  readonly times: string;
  complete: boolean;
  interrupted: boolean;
  /** Why the run stopped before the end (a store went away): the report shows how far it got. */
  failure: string | null;
  /** When the automation engine was told the move happened: it fires only time slots after it. */
  cutOver: string | null;
  seconds: number;
  readonly collections: CollectionReport[];
}

export function newCollectionReport(collection: LegacyCollection, found: boolean): CollectionReport {
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
    skipped: 0,
    complete: false,
    rejections: [],
    notes: [],
    summary: [],
  };
}

export function list(into: Listed[], id: string, texts: readonly string[]): void {
  for (const text of texts) if (into.length < MAX_LISTED_PER_COLLECTION) into.push({ id, text });
}

/** A document the target cannot take is rejected; a store that went away stops the run. */
export function isRejection(error: unknown): error is Error {
  return isDomainError(error) && (error.code === 'INVALID_INPUT' || error.code === 'CONFLICT');
}

export function reject(report: CollectionReport, document: LegacyDocument, error: Error): void {
  report.rejected += 1;
  list(report.rejections, legacyId(document), [error.message]);
}

export function count(report: CollectionReport, document: LegacyDocument, copied: Copied): void {
  if (copied.outcome === 'written') report.written += 1;
  else if (copied.outcome === 'merged') report.merged += 1;
  else report.alreadyThere += 1;
  list(report.notes, legacyId(document), copied.notes);
}

export function showReport(report: MigrationReport): string {
  const lines = [
    `${report.dryRun ? 'Dry run (nothing written) from' : 'Migrated from'} ${report.source} ` +
      `in ${report.seconds} s${report.interrupted ? ': INTERRUPTED, run the same command again to resume' : ''}.`,
    `Reading times: ${report.times}.`,
    '',
    table(
      [
        'COLLECTION',
        'INTO',
        'READ',
        'WRITTEN',
        'ALREADY THERE',
        'MERGED',
        'DUPLICATES',
        'REJECTED',
        'SKIPPED',
      ],
      report.collections.map((c) =>
        !c.found
          ? [c.collection, 'not in the source', '', '', '', '', '', '', '']
          : c.into === null
            ? [c.collection, 'not copied', c.read, '', '', '', '', '', '']
            : [
                c.collection,
                c.into,
                c.read,
                c.written,
                c.alreadyThere,
                c.merged,
                c.duplicates,
                c.rejected,
                c.skipped,
              ],
      ),
    ),
  ];
  if (report.failure !== null) lines.push(`STOPPED: ${report.failure}`);
  if (report.cutOver !== null) {
    lines.push(
      `Cut-over recorded at ${report.cutOver}: the automation engine fires only time slots after it.`,
    );
  }
  for (const c of report.collections) for (const line of c.summary) lines.push(`${c.collection}: ${line}`);
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
