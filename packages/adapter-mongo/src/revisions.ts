import { randomBytes } from 'node:crypto';
import {
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  MongoBulkWriteError,
  type WriteError,
} from 'mongodb';
import { type RevisionSubject } from '@hortus/core';
import { type CollectionSpec, isDuplicateKeyCode } from './support.js';

interface RevisionDocument {
  /** `[subject, group]` as JSON. */
  _id: string;
  /** Counts the writes. */
  n: number;
  /** Set when the document is created: a counter that starts again (the document was removed) never repeats. */
  epoch: string;
}

export const revisionCollection: CollectionSpec = { name: 'revisions', indexes: [] };

/**
 * Per-group change counters in the database, so every server sharing it sees every change (an ETag from one
 * server stays valid on another). Looked up and bumped by `_id` only.
 */
export class StoredRevisions {
  private readonly collection: Collection<RevisionDocument>;

  constructor(
    db: Db,
    private readonly subject: RevisionSubject,
  ) {
    this.collection = db.collection<RevisionDocument>(revisionCollection.name);
  }

  async current(group: string): Promise<string> {
    const document = await this.collection.findOne({ _id: this.key(group) });
    return document === null ? '0' : `${document.epoch}.${document.n}`;
  }

  /** Every group with a counter of this subject, with its current text: one indexed prefix scan of `_id`. */
  async all(): Promise<Map<string, string>> {
    const prefix = JSON.stringify([this.subject, '']).slice(0, -2);
    const documents = await this.collection
      .find({ _id: { $regex: `^${prefix.replace(/[[\]\\^$.|?*+(){}]/gu, '\\$&')}` } })
      .toArray();
    const revisions = new Map<string, string>();
    for (const document of documents) {
      const [, group] = JSON.parse(document._id) as [string, string];
      revisions.set(group, `${document.epoch}.${document.n}`);
    }
    return revisions;
  }

  /** Bumps after the write it follows, so a revision never names data older than what it stands for. */
  async bump(groups: Iterable<string>): Promise<void> {
    const operations = [...new Set(groups)].map((group): AnyBulkWriteOperation<RevisionDocument> => ({
      updateOne: {
        filter: { _id: this.key(group) },
        update: { $inc: { n: 1 }, $setOnInsert: { epoch: randomBytes(6).toString('base64url') } },
        upsert: true,
      },
    }));
    await upsertAll(this.collection, operations);
  }

  private key(group: string): string {
    return JSON.stringify([this.subject, group]);
  }
}

/**
 * Runs unordered upserts. Two upserts racing to create one document can fail with a duplicate key; those
 * (and only those, as a repeated `$inc` would count twice) are run once more, when the document exists.
 */
export async function upsertAll<T extends { _id: string }>(
  collection: Collection<T>,
  operations: readonly AnyBulkWriteOperation<T>[],
): Promise<void> {
  if (operations.length === 0) return;
  try {
    await collection.bulkWrite([...operations], { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError) || error.result.getWriteConcernError() !== undefined)
      throw error;
    const writeErrors = error.result.getWriteErrors();
    const duplicate = (writeError: WriteError): boolean =>
      isDuplicateKeyCode(writeError.code) ||
      // FerretDB v1 reports a unique violation caused by an update as InternalError with SQLite's text.
      (writeError.code === 1 && writeError.errmsg?.includes('UNIQUE constraint failed') === true);
    if (writeErrors.length === 0 || !writeErrors.every(duplicate)) {
      throw error;
    }
    const retried = writeErrors
      .map((writeError) => operations[writeError.index])
      .filter((operation): operation is AnyBulkWriteOperation<T> => operation !== undefined);
    await collection.bulkWrite(retried, { ordered: false });
  }
}
