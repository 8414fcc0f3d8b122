import { Binary, type Collection, ObjectId } from 'mongodb';
import { addToSum, type BucketSums, type NewReading, type ReadingSum, type RollupPiece } from '@hortus/core';
import { type Filter } from 'mongodb';
import {
  type CollectionSpec,
  type DatabaseHandle,
  headOf,
  type RevisionFields,
  writeRevisions,
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

// Serves every read (a chunk's revisions, a series' chunks over a span) and arbitrates each revision of a chunk.
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
      const found = await collection
        .find(seriesFilter(level, group, topic, start, end), { projection: { start: 1 } })
        .toArray();
      let pending = [...new Set(found.map((document) => document.start.getTime()))].map(
        (chunkStart): ChunkOfSeries => ({ id: chunkId(prefix, chunkStart), group, topic, start: chunkStart }),
      );
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && pending.length > 0; attempt += 1) {
        // Read again on every attempt: a writer that came first may have added edge readings.
        const changes = changesOf(level, await stillStored(start, end - 1));
        const written = await writeChunks(collection, group, pending, (stored, chunk) =>
          rebuiltCells(level, stored, chunk.start, start, end, changes.get(chunk.id)),
        );
        pending = pending.filter((_, index) => !written[index]);
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
    const documents = await collection
      .find(seriesFilter(level, group, topic, piece.from, piece.to), {
        projection: { start: 1, cells: 1, v: 1 },
      })
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

/** One chunk of one series, named by its chunk id. */
interface ChunkOfSeries {
  readonly id: string;
  readonly group: string;
  readonly topic: string;
  readonly start: number;
}

/** Every revision of the series' chunks that hold a time in [fromMs, toMs) (either edge may be infinite). */
function seriesFilter(
  level: RollupLevel,
  group: string,
  topic: string,
  fromMs: number,
  toMs: number,
): Filter<RollupDocument> {
  const start = {
    ...(Number.isFinite(fromMs)
      ? { $gte: new Date(Math.floor(fromMs / level.chunkMs) * level.chunkMs) }
      : {}),
    ...(Number.isFinite(toMs)
      ? { $lte: new Date(Math.floor((toMs - 1) / level.chunkMs) * level.chunkMs) }
      : {}),
  };
  return { group, topic, ...(Object.keys(start).length === 0 ? {} : { start }) };
}

/**
 * Equality for a single value, else `$in`. Only equalities reach FerretDB v1's backend (it reads the whole
 * collection for any other condition); MongoDB serves both alike from the chunk index.
 */
function oneOrIn<T>(values: readonly T[]): T | { $in: T[] } {
  return values.length === 1 ? (values[0] as T) : { $in: [...values] };
}

/**
 * Writes the next revision of some chunks of one group, their cells computed from each head's, in four
 * commands whatever their number (see writeRevisions); answers per chunk whether it was written (false:
 * another writer came first).
 */
async function writeChunks<C extends ChunkOfSeries>(
  collection: Collection<RollupDocument>,
  group: string,
  chunks: readonly C[],
  cellsOf: (stored: Binary | undefined, chunk: C) => Binary,
): Promise<boolean[]> {
  // Indexed by the chunk index's fields (not `_id` ranges): MongoDB serves either by an index, but FerretDB
  // v1 reads its whole collection for a range, half a second a batch once a few hundred groups hold data.
  const filter: Filter<RollupDocument> = {
    group,
    topic: oneOrIn([...new Set(chunks.map((chunk) => chunk.topic))]),
    start: oneOrIn([...new Set(chunks.map((chunk) => chunk.start))].map((start) => new Date(start))),
  };
  const read = async (projection: Record<string, 1>): Promise<Map<string, RollupDocument[]>> => {
    const byChunk = new Map<string, RollupDocument[]>();
    const documents = await collection
      .find(filter, { projection: { topic: 1, start: 1, ...projection } })
      .toArray();
    for (const document of documents) {
      const id = chunkId(seriesPrefix(group, document.topic), document.start.getTime());
      const revisions = byChunk.get(id);
      if (revisions === undefined) byChunk.set(id, [document]);
      else revisions.push(document);
    }
    return byChunk;
  };
  const loaded = await read({ cells: 1, v: 1, parent: 1 });
  const writes = chunks.map((chunk) => {
    const revisions = loaded.get(chunk.id) ?? [];
    const head = headOf(revisions);
    const v = (head?.v ?? 0) + 1;
    const next: RollupDocument = {
      _id: `${chunk.id}.${String(v).padStart(VERSION_DIGITS, '0')}.${new ObjectId().toHexString()}`,
      group,
      topic: chunk.topic,
      start: new Date(chunk.start),
      cells: cellsOf(head?.cells, chunk),
      v,
      ...(head === undefined ? {} : { parent: head._id }),
    };
    return { loaded: revisions, next };
  });
  return writeRevisions(
    collection,
    writes,
    async () => {
      const afterwards = await read({ v: 1, parent: 1 });
      return chunks.map((chunk) => afterwards.get(chunk.id) ?? []);
    },
    // The group is implied by the ids; named, it lets FerretDB v1 read only the group's documents.
    (ids) => ({ group, _id: { $in: ids as string[] } }),
  );
}

async function writeChanges(
  level: RollupLevel,
  collection: Collection<RollupDocument>,
  changes: Map<string, ChunkChange>,
): Promise<void> {
  let pending = [...changes].map(([id, change]) => ({ id, ...change }));
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && pending.length > 0; attempt += 1) {
    const byGroup = new Map<string, (ChunkChange & ChunkOfSeries)[]>();
    for (const chunk of pending) {
      const ofGroup = byGroup.get(chunk.group);
      if (ofGroup === undefined) byGroup.set(chunk.group, [chunk]);
      else ofGroup.push(chunk);
    }
    const written = await Promise.all(
      [...byGroup].map(async ([group, chunks]) => {
        const outcomes = await writeChunks(collection, group, chunks, (stored, chunk) =>
          mergedCells(level, stored, chunk),
        );
        return chunks.filter((_, index) => !outcomes[index]);
      }),
    );
    pending = written.flat();
  }
  if (pending.length > 0) {
    throw new Error(`rollup chunks kept changing under concurrent writers: ${pending.length} not written`);
  }
}
