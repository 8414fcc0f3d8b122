import { Binary, type Collection, ObjectId } from 'mongodb';
import { addToSum, type BucketSums, type NewReading, type ReadingSum, type RollupPiece } from '@hortus/core';
import {
  type CollectionSpec,
  type DatabaseHandle,
  headOf,
  type RevisionFields,
  writeRevision,
} from './support.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** Makes every valid Date's milliseconds non-negative, so chunk ids are fixed-width digits that sort by time. */
const TIME_OFFSET = 8.64e15;
const TIME_DIGITS = 17;
/** Count, sum, smallest and largest value: four doubles a cell. */
const CELL_NUMBERS = 4;
const CELL_BYTES = CELL_NUMBERS * 8;
/** A chunk written by one add() changes under another's feet at most this often before add() gives up. */
const MAX_WRITE_ATTEMPTS = 50;
const VERSION_DIGITS = 10;

/**
 * One revision of the cells of one series over one chunk of time. The cells are packed into one binary value
 * (little-endian doubles), not a sub-document each: documents of thousands of fields are slow to read and to
 * update on some servers (FerretDB), one binary value is cheap everywhere. A write stores the chunk's next
 * revision and deletes the one it was built on (see writeRevision), so concurrent writers never lose a
 * reading, also where updates are not isolated (FerretDB v1).
 */
interface RollupDocument extends RevisionFields {
  /**
   * The chunk id (JSON `[group, topic]`, then the chunk's start as fixed-width digits: series, then time
   * order), then `.`, the revision's `v` as fixed-width digits and `.` a unique token. Older documents hold
   * just the chunk id (one document per chunk, updated in place).
   */
  _id: string;
  group: string;
  topic: string;
  start: Date;
  cells: Binary;
  /** The chunk's revision: one more than the one it was built on; unique per chunk. */
  v: number;
  /** The `_id` of the revision this one was built on. */
  parent?: string;
}

export interface RollupLevel {
  readonly collection: string;
  /** Time covered by one cell. */
  readonly unitMs: number;
  /** Time covered by one document: a few kilobytes, rewritten whole when readings arrive. */
  readonly chunkMs: number;
}

/** Coarsest first: a query uses the coarsest level whose unit divides its bucket. */
export const rollupLevels: readonly RollupLevel[] = [
  { collection: 'readingrollups_1h', unitMs: HOUR_MS, chunkMs: 10 * DAY_MS },
  { collection: 'readingrollups_1m', unitMs: MINUTE_MS, chunkMs: 6 * HOUR_MS },
];

// Documents are read by `_id` ranges; the unique index arbitrates each revision of a chunk.
export const rollupCollections: readonly CollectionSpec[] = rollupLevels.map(({ collection }) => ({
  name: collection,
  indexes: [{ key: { group: 1, topic: 1, start: 1, v: 1 }, name: 'chunk_v_unique', unique: true }],
}));

function seriesPrefix(group: string, topic: string): string {
  // A JSON array of strings is never a prefix of another one, so a prefix range holds one series only.
  return JSON.stringify([group, topic]);
}

function chunkId(prefix: string, chunkStartMs: number): string {
  return prefix + String(chunkStartMs + TIME_OFFSET).padStart(TIME_DIGITS, '0');
}

/** Every revision of a chunk has an `_id` in this range, and no other document does. */
function revisionRange(id: string): { $gte: string; $lt: string } {
  // '/' sorts right after '.', which follows the chunk id in every revision's `_id`.
  return { $gte: id, $lt: `${id}/` };
}

function cellsPerChunk(level: RollupLevel): number {
  return level.chunkMs / level.unitMs;
}

function readCell(view: DataView, index: number): ReadingSum {
  const offset = index * CELL_BYTES;
  return {
    n: view.getFloat64(offset, true),
    s: view.getFloat64(offset + 8, true),
    lo: view.getFloat64(offset + 16, true),
    hi: view.getFloat64(offset + 24, true),
  };
}

function viewOf(cells: Binary): DataView {
  const bytes = cells.value();
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** New cells of one chunk, gathered from a batch of readings. */
interface ChunkChange {
  readonly group: string;
  readonly topic: string;
  readonly start: number;
  readonly cells: Map<number, ReadingSum>;
}

/**
 * Per-series summaries written as readings are stored, per minute and per hour: a history of months is then
 * summarised from a few dozen small documents instead of every reading, on any server (FerretDB has no
 * `$group` accumulators). Each chunk is read, merged and written back under its version, so concurrent
 * writers retry instead of overwriting each other.
 */
export class ReadingRollups {
  private readonly collections: ReadonlyMap<RollupLevel, Collection<RollupDocument>>;

  constructor(db: DatabaseHandle) {
    this.collections = new Map(
      rollupLevels.map((level) => [level, db.collection<RollupDocument>(level.collection)]),
    );
  }

  /** Adds readings that were just stored (never a duplicate: it would count twice). */
  async add(readings: readonly NewReading[]): Promise<void> {
    if (readings.length === 0) return;
    await Promise.all(
      [...this.collections].map(([level, collection]) =>
        writeChanges(level, collection, changesOf(level, readings)),
      ),
    );
  }

  /**
   * Corrects one series' cells after its readings in [fromMs, toMs] were removed: every cell touching that
   * span is emptied, and the cells at its edges are summed again from the readings still stored there, which
   * `stillStored` answers for a span [from, to] (inclusive). Each chunk gets a next revision, as add() writes.
   */
  async removeSpan(
    group: string,
    topic: string,
    fromMs: number,
    toMs: number,
    stillStored: (fromMs: number, toMs: number) => Promise<readonly NewReading[]>,
  ): Promise<void> {
    const prefix = seriesPrefix(group, topic);
    for (const [level, collection] of this.collections) {
      const start = Math.floor(fromMs / level.unitMs) * level.unitMs;
      const end = (Math.floor(toMs / level.unitMs) + 1) * level.unitMs;
      const lowest = chunkId(prefix, Math.floor(start / level.chunkMs) * level.chunkMs);
      const highest = revisionRange(
        chunkId(prefix, Math.floor((end - 1) / level.chunkMs) * level.chunkMs),
      ).$lt;
      const found = await collection
        .find({ _id: { $gte: lowest, $lt: highest } }, { projection: { _id: 1 } })
        .toArray();
      let pending = [...new Set(found.map(({ _id }) => _id.slice(0, prefix.length + TIME_DIGITS)))];
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && pending.length > 0; attempt += 1) {
        // Read again on every attempt: a writer that came first may have added edge readings.
        const changes = changesOf(level, await stillStored(start, end - 1));
        const written = await Promise.all(
          pending.map((id) => {
            const chunkStart = Number(id.slice(prefix.length)) - TIME_OFFSET;
            return writeChunk(level, collection, id, { group, topic, start: chunkStart }, (stored) =>
              rebuiltCells(level, stored, chunkStart, start, end, changes.get(id)),
            );
          }),
        );
        pending = pending.filter((_, index) => written[index] !== true);
      }
      if (pending.length > 0) {
        throw new Error(
          `rollup chunks kept changing under concurrent writers: ${pending.length} not corrected`,
        );
      }
    }
  }

  /**
   * Deletes the group's chunks (every revision) that cover only times before `beforeMs`; answers how many documents
   * went. Old chunks are no longer written, so no revision race applies to them.
   */
  async removeBefore(group: string, beforeMs: number): Promise<number> {
    let removed = 0;
    for (const [level, collection] of this.collections) {
      const { deletedCount } = await collection.deleteMany({
        group,
        start: { $lte: new Date(beforeMs - level.chunkMs) },
      });
      removed += deletedCount;
    }
    return removed;
  }

  /** Adds every cell of the level in the piece of one series to the sums; answers how many it found. */
  async addCells(
    level: RollupLevel,
    group: string,
    topic: string,
    piece: RollupPiece<RollupLevel>,
    sums: BucketSums,
  ): Promise<number> {
    const collection = this.collections.get(level);
    if (collection === undefined) return 0;
    const prefix = seriesPrefix(group, topic);
    const lowest = Number.isFinite(piece.from)
      ? chunkId(prefix, Math.floor(piece.from / level.chunkMs) * level.chunkMs)
      : prefix;
    // Digits follow the prefix, and ':' sorts right after '9'.
    const highest = Number.isFinite(piece.to)
      ? revisionRange(chunkId(prefix, Math.floor((piece.to - 1) / level.chunkMs) * level.chunkMs)).$lt
      : `${prefix}:`;
    const documents = await collection
      .find({ _id: { $gte: lowest, $lt: highest } }, { projection: { start: 1, cells: 1, v: 1 } })
      .toArray();
    // Each chunk counts once, by its newest revision; an older one is only left while its successor is written.
    const chunks = new Map<number, RollupDocument[]>();
    for (const document of documents) {
      const revisions = chunks.get(document.start.getTime());
      if (revisions === undefined) chunks.set(document.start.getTime(), [document]);
      else revisions.push(document);
    }
    let found = 0;
    for (const document of [...chunks.values()].map((revisions) => headOf(revisions) as RollupDocument)) {
      const chunkStart = document.start.getTime();
      const view = viewOf(document.cells);
      const count = Math.floor(view.byteLength / CELL_BYTES);
      for (let index = 0; index < count; index += 1) {
        const timeMs = chunkStart + index * level.unitMs;
        if (timeMs < piece.from || timeMs >= piece.to) continue;
        const cell = readCell(view, index);
        if (!(cell.n > 0)) continue;
        sums.add(timeMs, cell);
        found += 1;
      }
    }
    return found;
  }
}

function changesOf(level: RollupLevel, readings: readonly NewReading[]): Map<string, ChunkChange> {
  const chunks = new Map<string, ChunkChange>();
  for (const { group, topic, value, time } of readings) {
    const timeMs = time.getTime();
    const start = Math.floor(timeMs / level.chunkMs) * level.chunkMs;
    const id = chunkId(seriesPrefix(group, topic), start);
    let chunk = chunks.get(id);
    if (chunk === undefined) {
      chunk = { group, topic, start, cells: new Map() };
      chunks.set(id, chunk);
    }
    const index = Math.floor((timeMs - start) / level.unitMs);
    const cell = chunk.cells.get(index);
    if (cell === undefined) chunk.cells.set(index, { n: 1, s: value, lo: value, hi: value });
    else addToSum(cell, { n: 1, s: value, lo: value, hi: value });
  }
  return chunks;
}

/** The stored cells with the changes merged in, packed again. */
function mergedCells(level: RollupLevel, stored: Binary | undefined, change: ChunkChange): Binary {
  const bytes = new Uint8Array(cellsPerChunk(level) * CELL_BYTES);
  if (stored !== undefined) bytes.set(stored.value().subarray(0, bytes.byteLength));
  const view = new DataView(bytes.buffer);
  for (const [index, cell] of change.cells) {
    const merged = readCell(view, index);
    addToSum(merged, cell);
    const offset = index * CELL_BYTES;
    view.setFloat64(offset, merged.n, true);
    view.setFloat64(offset + 8, merged.s, true);
    view.setFloat64(offset + 16, merged.lo, true);
    view.setFloat64(offset + 24, merged.hi, true);
  }
  return new Binary(bytes);
}

/** A chunk's cells with those in [start, end) emptied, then the change (the edge readings) merged in. */
function rebuiltCells(
  level: RollupLevel,
  stored: Binary | undefined,
  chunkStart: number,
  start: number,
  end: number,
  change: ChunkChange | undefined,
): Binary {
  const bytes = new Uint8Array(cellsPerChunk(level) * CELL_BYTES);
  if (stored !== undefined) bytes.set(stored.value().subarray(0, bytes.byteLength));
  const first = Math.max(0, Math.floor((start - chunkStart) / level.unitMs));
  const last = Math.min(cellsPerChunk(level), Math.ceil((end - chunkStart) / level.unitMs));
  if (last > first) bytes.fill(0, first * CELL_BYTES, last * CELL_BYTES);
  const emptied = new Binary(bytes);
  return change === undefined ? emptied : mergedCells(level, emptied, change);
}

/**
 * Writes the next revision of one chunk, its cells computed from the head's (by default: the change merged
 * in); false when another writer came first.
 */
async function writeChunk(
  level: RollupLevel,
  collection: Collection<RollupDocument>,
  id: string,
  change: Pick<ChunkChange, 'group' | 'topic' | 'start'>,
  cellsOf: (stored: Binary | undefined) => Binary,
): Promise<boolean> {
  const range = revisionRange(id);
  const loaded = await collection
    .find({ _id: range }, { projection: { cells: 1, v: 1, parent: 1 } })
    .toArray();
  const head = headOf(loaded);
  const v = (head?.v ?? 0) + 1;
  const { group, topic, start } = change;
  const next: RollupDocument = {
    _id: `${id}.${String(v).padStart(VERSION_DIGITS, '0')}.${new ObjectId().toHexString()}`,
    group,
    topic,
    start: new Date(start),
    cells: cellsOf(head?.cells),
    v,
    ...(head === undefined ? {} : { parent: head._id }),
  };
  return writeRevision(collection, loaded, next, () =>
    collection.find({ _id: range }, { projection: { v: 1, parent: 1 } }).toArray(),
  );
}

async function writeChanges(
  level: RollupLevel,
  collection: Collection<RollupDocument>,
  changes: Map<string, ChunkChange>,
): Promise<void> {
  let pending = [...changes];
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && pending.length > 0; attempt += 1) {
    const written = await Promise.all(
      pending.map(([id, change]) =>
        writeChunk(level, collection, id, change, (stored) => mergedCells(level, stored, change)),
      ),
    );
    pending = pending.filter((_, index) => written[index] !== true);
  }
  if (pending.length > 0) {
    throw new Error(`rollup chunks kept changing under concurrent writers: ${pending.length} not written`);
  }
}
