import { inject, injectable } from 'inversify';
import { type ChangeFeed, type GroupChanges } from '@hortus/core';
import { CHANGE_MARGIN_MS, CLOCK_ID, revisionCollection, type RevisionDocument } from './revisions.js';
import { MONGO_DATABASE, MongoRepository } from './support.js';
import { type MongoDatabase } from './database.js';

/** What a cursor holds; it is only ever read back by the process that made it. */
interface FeedCursor {
  /** The clock document as read (epoch.n.token.changed). */
  readonly clock: string;
  /** The newest `changed` seen, by the database's clock. */
  readonly watermark: number;
  /** When this process saw the clock change, by its own clock. */
  readonly clockSeenAt: number;
  /** A read of what changed ran CHANGE_MARGIN_MS or more after that: until the clock moves, nothing did. */
  readonly settled: boolean;
}

/**
 * The change feed over the revisions collection, for every server on the database. While nothing changes
 * an answer is one read of the clock document by `_id` (no per-group work); after a change, one query for
 * the counters changed since the newest change seen, less a margin (a bump's time is taken before its write
 * commits; see RevisionMirror). Change streams would push instead, but need a replica set, which FerretDB
 * and a single test server lack. Counters reported once are not reported again while their text stays
 * the same (the margin reads them again).
 */
@injectable()
export class MongoChangeFeed extends MongoRepository<RevisionDocument> implements ChangeFeed {
  /** Counters this feed reported, with their text, while they are within the margin; see changesSince. */
  private readonly reported = new Map<string, { text: string; changed: number }>();
  private lastCursor: string | undefined;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, revisionCollection, 'group', 'That change is already stored');
  }

  async changesSince(cursor: string | undefined): Promise<GroupChanges> {
    return this.run(async () => {
      const document = await this.collection.findOne({ _id: CLOCK_ID });
      const clock = clockText(document);
      const since = parse(cursor);
      const now = Date.now();
      if (since === undefined || (since.clock !== '' && epochOf(since.clock) !== epochOf(clock))) {
        this.reported.clear();
        const watermark = document?.changed?.getTime() ?? 0;
        return this.answer([], { clock, watermark, clockSeenAt: now, settled: false }, true);
      }
      if (clock === since.clock && since.settled) return this.answer([], since, false);
      // The reported set belongs to the cursor this feed answered last; any other starts afresh.
      if (cursor !== this.lastCursor) this.reported.clear();
      const clockSeenAt = clock === since.clock ? since.clockSeenAt : now;
      const from = since.watermark - CHANGE_MARGIN_MS;
      // The `changed` index serves this on MongoDB; FerretDB v1 on SQLite reads the whole collection for it
      // (about 140 ms for 3000 counters), which is why a quiet feed asks only for the clock by `_id`.
      const documents = await this.collection.find({ changed: { $gte: new Date(from) } }).toArray();
      let watermark = since.watermark;
      const groups = new Set<string>();
      for (const changedDocument of documents) {
        const changed = changedDocument.changed?.getTime();
        if (changedDocument._id === CLOCK_ID || changed === undefined) continue;
        if (changed > watermark) watermark = changed;
        const text = `${changedDocument.epoch}.${changedDocument.n}`;
        if (this.reported.get(changedDocument._id)?.text === text) continue;
        this.reported.set(changedDocument._id, { text, changed });
        const group = groupOf(changedDocument._id);
        if (group !== undefined) groups.add(group);
      }
      for (const [key, entry] of this.reported) {
        if (entry.changed < watermark - CHANGE_MARGIN_MS) this.reported.delete(key);
      }
      const settled = now - clockSeenAt >= CHANGE_MARGIN_MS;
      return this.answer([...groups], { clock, watermark, clockSeenAt, settled }, false);
    });
  }

  private answer(groups: string[], cursor: FeedCursor, reset: boolean): GroupChanges {
    this.lastCursor = JSON.stringify(cursor);
    return { groups, cursor: this.lastCursor, reset };
  }
}

function clockText(document: RevisionDocument | null): string {
  return document === null
    ? ''
    : `${document.epoch}.${document.n}.${document.token}.${document.changed?.getTime()}`;
}

/**
 * A wiped collection starts a new clock document, with a new epoch: the old cursor means nothing then. A
 * cursor from before the first change ever ('') reads everything since, which is all there is.
 */
function epochOf(clock: string): string {
  return clock.split('.')[0] ?? '';
}

function groupOf(key: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(key);
    return Array.isArray(parsed) && typeof parsed[1] === 'string' ? parsed[1] : undefined;
  } catch {
    return undefined;
  }
}

function parse(cursor: string | undefined): FeedCursor | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed = JSON.parse(cursor) as Partial<FeedCursor> | null;
    if (
      typeof parsed?.clock !== 'string' ||
      typeof parsed.watermark !== 'number' ||
      typeof parsed.clockSeenAt !== 'number' ||
      typeof parsed.settled !== 'boolean'
    ) {
      return undefined;
    }
    return parsed as FeedCursor;
  } catch {
    return undefined;
  }
}
