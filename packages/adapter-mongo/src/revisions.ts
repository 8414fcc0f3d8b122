import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type AnyBulkWriteOperation,
  type Collection,
  type Document,
  type Filter,
  MongoBulkWriteError,
} from 'mongodb';
import { type RevisionSubject } from '@hortus/core';
import { type CollectionSpec, isDuplicateWriteError, withDeadline } from './support.js';

export interface RevisionDocument {
  /** `[subject, group]` as JSON. */
  _id: string;
  /** Counts the writes. */
  n: number;
  /** Set when the document is created: a counter that starts again (the document was removed) never repeats. */
  epoch: string;
  /**
   * When the last bump was applied, by the database's clock (`$currentDate`), so the mirrors of all servers
   * ask for what changed since then whatever their own clocks say. Absent on documents from before it existed.
   */
  changed?: Date;
  /** On the clock document only: new at each bump, so every bump changes the document (see CLOCK_ID). */
  token?: string;
}

/**
 * A document every bump also updates: while it stays as it was, nothing changed, and one read by `_id` says
 * so. FerretDB v1 answers any other filter by reading the whole collection (140 ms for 3000 counters on the
 * test machine, against 2 ms by `_id`). Not a JSON array, so no group's key can be it.
 */
export const CLOCK_ID = 'clock';

export const revisionCollection: CollectionSpec = {
  name: 'revisions',
  indexes: [{ key: { changed: 1 }, name: 'changed' }],
};

/**
 * How far before the newest change it has seen the mirror asks again: a bump's time is taken before its
 * write commits, so writes can become visible out of their time order. A later write seen first must not
 * hide an earlier one that commits a little later.
 */
export const CHANGE_MARGIN_MS = 5000;
/** Every document is read again this often, so a removed document (none is, outside tests) reads '0' again. */
const FULL_RESYNC_MS = 30_000;
/** A mirror nobody asked for this long stops polling; the next question starts it again. */
const IDLE_STOP_MS = 60_000;

/** What StoredRevisions takes from its database context (MongoDatabase, database.ts). */
export interface RevisionsHandle {
  collection<TDocument extends Document>(name: string): Collection<TDocument>;
  /** The one mirror of the revisions collection shared on this database; none when polling is off. */
  revisionMirror(): RevisionMirror | undefined;
}

function textOf(document: RevisionDocument | null): string {
  return document === null ? '0' : `${document.epoch}.${document.n}`;
}

interface MirroredRevision {
  readonly text: string;
  /** The order of the read it came from (see RevisionMirror.sequence): an older read never overwrites it. */
  readonly sequence: number;
}

/**
 * This process's copy of the revisions collection, so a poll of an unchanged group answers without a round
 * trip. One query per interval keeps it fresh: the clock document by `_id` while nothing changes; once it
 * changed, the documents changed since the newest change seen (less a margin); every document each
 * FULL_RESYNC_MS. A change through another server or the CLI is thus seen within about one interval.
 * FerretDB v1 has no change streams, hence polling.
 *
 * A question is answered from the database instead, as before the mirror existed, when
 * - the mirror has not refreshed successfully within max(1 s, 4 intervals) (a frozen or unreachable database
 *   still answers 503 within the operation deadline, and nothing stale is served meanwhile);
 * - this process bumped that key since (read-your-writes: an ETag changes right after the write).
 * It starts on the first question (commands that never ask get no timer), its timer is unref'd, and it
 * stops when the store closes or nobody asked for IDLE_STOP_MS.
 */
export class RevisionMirror {
  private readonly entries = new Map<string, MirroredRevision>();
  /** Keys bumped here, with the sequence of the bump: answered from the database until read after it. */
  private readonly dirty = new Map<string, number>();
  /** Orders reads and bumps of this process: a read's results apply only over older ones. */
  private sequence = 0;
  /** Changes on a stop, so a refresh still under way when it stopped is discarded. */
  private generation = 0;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  /** A full read succeeded since the mirror started: a key it lacks then has no document ('0'). */
  private loaded = false;
  private lastSuccessAt = Number.NEGATIVE_INFINITY;
  private lastFullAt = Number.NEGATIVE_INFINITY;
  private lastAskedAt = 0;
  /** The newest `changed` seen, by the database's clock. */
  private watermark: number | undefined;
  /** The clock document as last read, and when it was last seen to change (this process's clock). */
  private clock: string | undefined;
  private clockChangedAt = Number.NEGATIVE_INFINITY;
  private readonly staleAfterMs: number;
  /** The refresh under way, if any. */
  private inFlight: Promise<void> | undefined;
  /** The refresh the questions of a stale mirror wait for; it begins after every question that joined it. */
  private queued: Promise<boolean> | undefined;

  constructor(
    private readonly collection: Collection<RevisionDocument>,
    private readonly intervalMs: number,
    private readonly deadlineMs: number | undefined,
  ) {
    this.staleAfterMs = Math.max(1000, 4 * intervalMs);
  }

  async current(key: string): Promise<string> {
    this.lastAskedAt = performance.now();
    this.start();
    const mirrored = this.answer(key);
    if (mirrored !== undefined) return mirrored;
    // Stale, the database being slow: the questions meanwhile wait for one refresh begun after them rather
    // than each sending a query. A query per poll (a thousand a second) slowed the database further, the
    // mirror's own refresh with it, and every poll then failed on the store deadline.
    const answerable = (): boolean => this.loaded && !this.dirty.has(key);
    if (answerable() && (await this.refreshAfterNow()) && answerable()) {
      return this.entries.get(key)?.text ?? '0';
    }
    const sequence = ++this.sequence;
    const text = textOf(await this.collection.findOne({ _id: key }));
    this.apply(key, text, sequence);
    if ((this.dirty.get(key) ?? Number.POSITIVE_INFINITY) < sequence) this.dirty.delete(key);
    return text;
  }

  /** After a bump (done or failed: it may have applied): this process's next question reads the database. */
  bumped(keys: Iterable<string>): void {
    for (const key of keys) this.dirty.set(key, ++this.sequence);
  }

  stop(): void {
    this.running = false;
    this.generation += 1;
    this.loaded = false;
    this.watermark = undefined;
    this.clock = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private answer(key: string): string | undefined {
    const fresh = this.loaded && performance.now() - this.lastSuccessAt <= this.staleAfterMs;
    if (!fresh || this.dirty.has(key)) return undefined;
    return this.entries.get(key)?.text ?? '0';
  }

  private start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    // unref: a process with nothing else to do (a CLI command, a test) ends though the mirror polls.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, delayMs).unref();
  }

  private async tick(): Promise<void> {
    const generation = this.generation;
    if (performance.now() - this.lastAskedAt > IDLE_STOP_MS) {
      this.stop();
      return;
    }
    // A failure is an outage: retried each interval, while questions go to the database. A client closed
    // without its store's close() (a bare module) fails here until the mirror stops for want of questions.
    await this.refreshOnce();
    if (generation === this.generation) this.schedule(this.intervalMs);
  }

  /** One refresh, never beside another (the timer's or the questions'); answers whether it succeeded. */
  private async refreshOnce(): Promise<boolean> {
    while (this.inFlight !== undefined) await this.inFlight;
    const generation = this.generation;
    const run = withDeadline(this.refresh(generation), this.deadlineMs).then(
      () => generation === this.generation,
      () => false,
    );
    this.inFlight = run.then(() => {
      this.inFlight = undefined;
    });
    return run;
  }

  /** A refresh that begins after this call: what it reads is at least as new as a query sent now. */
  private refreshAfterNow(): Promise<boolean> {
    if (this.queued === undefined) {
      let queued: Promise<boolean> | undefined = undefined;
      queued = (async () => {
        // Lets the assignment below happen before this reads it.
        await Promise.resolve();
        // One under way may have begun before the question.
        while (this.inFlight !== undefined) await this.inFlight;
        if (this.queued === queued) this.queued = undefined;
        return this.refreshOnce();
      })();
      this.queued = queued;
    }
    return this.queued;
  }

  private async refresh(generation: number): Promise<void> {
    const startedAt = performance.now();
    const sequence = ++this.sequence;
    const since = this.watermark;
    const full = !this.loaded || startedAt - this.lastFullAt >= FULL_RESYNC_MS;
    if (!full && startedAt - this.clockChangedAt >= CHANGE_MARGIN_MS) {
      // Quiet for a while: while the clock stays as it was, that one cheap read is the whole refresh.
      const clock = await this.collection.findOne({ _id: CLOCK_ID });
      if (generation !== this.generation) return;
      if (!this.noteClock(clock, startedAt)) {
        this.lastSuccessAt = startedAt;
        return;
      }
    }
    // Read what changed. This goes on for CHANGE_MARGIN_MS after the clock last changed: a counter's
    // write may commit after the clock's (one unordered bulk write), and must still be read.
    const filter: Filter<RevisionDocument> = full
      ? {}
      : { changed: { $gte: new Date((since ?? 0) - CHANGE_MARGIN_MS) } };
    const documents = await this.collection.find(filter).toArray();
    if (generation !== this.generation) return;
    if (full) {
      // What the database no longer has is gone, unless read since this read began.
      for (const [key, entry] of this.entries) if (entry.sequence < sequence) this.entries.delete(key);
      this.lastFullAt = startedAt;
      this.loaded = true;
    }
    for (const document of documents) {
      if (document._id === CLOCK_ID) {
        this.noteClock(document, startedAt);
        continue;
      }
      this.apply(document._id, textOf(document), sequence);
      const changed = document.changed instanceof Date ? document.changed.getTime() : undefined;
      if (changed !== undefined && !(changed <= (this.watermark ?? Number.NEGATIVE_INFINITY))) {
        this.watermark = changed;
      }
    }
    this.lastSuccessAt = startedAt;
  }

  /** True when the clock differs from the one last read: something changed since. */
  private noteClock(document: RevisionDocument | null, at: number): boolean {
    const clock =
      document === null
        ? ''
        : `${document.epoch}.${document.n}.${document.token}.${document.changed?.getTime()}`;
    if (clock === this.clock) return false;
    this.clock = clock;
    this.clockChangedAt = at;
    return true;
  }

  private apply(key: string, text: string, sequence: number): void {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.sequence < sequence) this.entries.set(key, { text, sequence });
  }
}

/**
 * Per-group change counters in the database, so every server sharing it sees every change (an ETag from one
 * server stays valid on another). Looked up and bumped by `_id` only.
 */
export class StoredRevisions {
  private readonly collection: Collection<RevisionDocument>;
  private readonly mirror: RevisionMirror | undefined;

  constructor(
    db: RevisionsHandle,
    private readonly subject: RevisionSubject,
  ) {
    this.collection = db.collection<RevisionDocument>(revisionCollection.name);
    this.mirror = db.revisionMirror();
  }

  /** From the process's mirror when it is fresh (see RevisionMirror), else one `findOne`. */
  async current(group: string): Promise<string> {
    const key = this.key(group);
    if (this.mirror !== undefined) return this.mirror.current(key);
    return textOf(await this.collection.findOne({ _id: key }));
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
      revisions.set(group, textOf(document));
    }
    return revisions;
  }

  /** Bumps after the write it follows, so a revision never names data older than what it stands for. */
  async bump(groups: Iterable<string>): Promise<void> {
    const keys = [...new Set(groups)].map((group) => this.key(group));
    if (keys.length === 0) return;
    const operations = [...keys, CLOCK_ID].map((key): AnyBulkWriteOperation<RevisionDocument> => ({
      updateOne: {
        filter: { _id: key },
        update: {
          $inc: { n: 1 },
          $currentDate: { changed: true },
          $setOnInsert: { epoch: randomBytes(6).toString('base64url') },
          ...(key === CLOCK_ID ? { $set: { token: randomBytes(6).toString('base64url') } } : {}),
        },
        upsert: true,
      },
    }));
    try {
      await upsertAll(this.collection, operations);
    } finally {
      this.mirror?.bumped(keys);
    }
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
    if (writeErrors.length === 0 || !writeErrors.every(isDuplicateWriteError)) {
      throw error;
    }
    const retried = writeErrors
      .map((writeError) => operations[writeError.index])
      .filter((operation): operation is AnyBulkWriteOperation<T> => operation !== undefined);
    await collection.bulkWrite(retried, { ordered: false });
  }
}
