import { type ReadingBucket } from './reading.js';

// Summaries of readings that every store computes the same way: the sum kept per unit of time (a rollup
// cell) or per bucket, and which stretches of a range whole rollup units answer. Pure: stores fetch the
// rows and write the cells; what they add up and where rollups apply is decided here.

/** Count, sum, smallest and largest value of some readings: a rollup cell, or a bucket being summed. */
export interface ReadingSum {
  n: number;
  s: number;
  lo: number;
  hi: number;
}

/** Adds `sum` into `into`; an empty `into` (n = 0, as a zeroed cell reads) takes `sum` as it is. */
export function addToSum(into: ReadingSum, sum: ReadingSum): void {
  if (into.n === 0) {
    Object.assign(into, sum);
    return;
  }
  into.n += sum.n;
  into.s += sum.s;
  if (sum.lo < into.lo) into.lo = sum.lo;
  if (sum.hi > into.hi) into.hi = sum.hi;
}

/**
 * Sums what falls into each bucket of `bucketMs`, from single readings and summed cells alike. With the
 * unit of a rollup level as the bucket, it gathers that level's cells from a batch of readings.
 */
export class BucketSums {
  // Buckets in the order they were created. A store that walks its readings newest first creates them in
  // answer order, and a bucket older than every one so far is surely new: no map or sort is needed then.
  // The map is built once a bucket comes that may already exist.
  private readonly starts: number[] = [];
  private readonly sums: ReadingSum[] = [];
  private byStart: Map<number, ReadingSum> | undefined;
  private createdNewestFirst = true;
  /** The bucket added to last: readings come in time order, so most land in the same bucket as the one before. */
  private lastStart = Number.NaN;
  private lastSum: ReadingSum | undefined;

  constructor(private readonly bucketMs: number) {}

  /** Adds a sum (a cell, or a bucket a database summed) whose unit starts at `timeMs`. */
  add(timeMs: number, sum: ReadingSum): void {
    const start = Math.floor(timeMs / this.bucketMs) * this.bucketMs;
    const found = this.find(start);
    if (found === undefined) this.create(start, { ...sum });
    else addToSum(found, sum);
  }

  /** Adds one reading; as add() with a sum of one, without building that sum (the per-reading path). */
  addValue(timeMs: number, value: number): void {
    const start = Math.floor(timeMs / this.bucketMs) * this.bucketMs;
    const found = this.find(start);
    if (found === undefined) {
      this.create(start, { n: 1, s: value, lo: value, hi: value });
      return;
    }
    found.n += 1;
    found.s += value;
    if (value < found.lo) found.lo = value;
    if (value > found.hi) found.hi = value;
  }

  /** Each bucket's start with its sum, in no particular order. */
  entries(): [number, ReadingSum][] {
    return this.starts.map((start, index) => [start, this.sums[index] as ReadingSum]);
  }

  /** The buckets as the ReadingRepository answers them: newest first, empty ones left out. */
  newestFirst(): ReadingBucket[] {
    const buckets = this.starts.map((start, index) => {
      const { n, s, lo, hi } = this.sums[index] as ReadingSum;
      return { time: new Date(start), min: lo, max: hi, avg: s / n, count: n };
    });
    if (!this.createdNewestFirst) buckets.sort((a, b) => b.time.getTime() - a.time.getTime());
    return buckets;
  }

  private find(start: number): ReadingSum | undefined {
    if (start === this.lastStart) return this.lastSum;
    const newest = this.starts.at(-1);
    let found: ReadingSum | undefined;
    if (this.byStart !== undefined) found = this.byStart.get(start);
    else if (newest !== undefined && start > newest) {
      this.byStart = new Map(this.starts.map((known, index) => [known, this.sums[index] as ReadingSum]));
      found = this.byStart.get(start);
    }
    if (found !== undefined) {
      this.lastStart = start;
      this.lastSum = found;
    }
    return found;
  }

  private create(start: number, sum: ReadingSum): void {
    const newest = this.starts.at(-1);
    if (newest !== undefined && start > newest) this.createdNewestFirst = false;
    this.starts.push(start);
    this.sums.push(sum);
    this.byStart?.set(start, sum);
    this.lastStart = start;
    this.lastSum = sum;
  }
}

/** A level of rollups: cells of `unitMs` each. */
export interface RollupUnit {
  readonly unitMs: number;
}

/** A stretch of time `[from, to)` answered from one rollup level, or from the readings when `level` is absent. */
export interface RollupPiece<L extends RollupUnit> {
  readonly from: number;
  readonly to: number;
  readonly level?: L;
}

/**
 * The levels (coarsest first) that can answer buckets of `bucketMs`: those whose unit divides the bucket,
 * so a unit lies inside one bucket; none under a value filter, which only the readings can apply.
 */
export function rollupLevelsFor<L extends RollupUnit>(
  levels: readonly L[],
  bucketMs: number,
  valueFiltered: boolean,
): L[] {
  return valueFiltered ? [] : levels.filter((level) => bucketMs % level.unitMs === 0);
}

/**
 * Splits `[from, to)` into the whole units of the coarsest level, the whole units of the next level at either
 * edge, and so on; what no level covers whole is left to the readings. Infinite ends stay open.
 */
export function planRollupPieces<L extends RollupUnit>(
  from: number,
  to: number,
  levels: readonly L[],
): RollupPiece<L>[] {
  if (from >= to) return [];
  const [level, ...finer] = levels;
  if (level === undefined) return [{ from, to }];
  const first = Number.isFinite(from) ? Math.ceil(from / level.unitMs) * level.unitMs : from;
  const last = Number.isFinite(to) ? Math.floor(to / level.unitMs) * level.unitMs : to;
  if (first >= last) return planRollupPieces(from, to, finer);
  return [
    ...planRollupPieces(from, first, finer),
    { from: first, to: last, level },
    ...planRollupPieces(last, to, finer),
  ];
}
