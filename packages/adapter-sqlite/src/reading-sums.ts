import {
  BucketSums,
  planRollupPieces,
  type ReadingBucket,
  type ReadingRange,
  rollupLevelsFor,
} from '@hortus/core';
import { boundsOf, bucketStart, rangeConditions, rollupLevels } from './reading-sql.js';
import { type SqliteConnection } from './support.js';

/** Where sums come from: the readings, or one level of rollups. */
interface SumSource {
  readonly table: string;
  readonly column: string;
  /** Selects n, s, lo and hi. */
  readonly sums: string;
  /** At most this many rows fall into one bucket; unknown for readings. */
  readonly rowsPerBucket?: number;
}

const readingSource: SumSource = {
  table: 'readings',
  column: 'time',
  sums: 'count(*) AS n, sum(value) AS s, min(value) AS lo, max(value) AS hi',
};

/** Above this many buckets in a range, or below this many rows in one, one GROUP BY beats a query per bucket. */
const MAX_BUCKET_QUERIES = 1000;
const MIN_ROWS_PER_BUCKET_QUERY = 8;

/** One bucket's sums as SQLite answers them. */
interface SumRow {
  bucket_start: number;
  n: number;
  s: number;
  lo: number;
  hi: number;
}

/** Summaries of one series' readings per bucket, from the rollup tables where they cover whole units. */
export class SqliteReadingSums {
  constructor(private readonly connection: SqliteConnection) {}

  /**
   * Whole hours come from the hour rollups and whole minutes from the minute rollups, as core's
   * planRollupPieces splits the range (a unit lies inside one bucket); what no level covers whole (the
   * edges of the range), and any range under a value filter, is summarised from the readings. SQLite sums
   * per bucket; BucketSums adds the pieces up.
   */
  aggregate(series: number, range: ReadingRange, bucketMs: number): ReadingBucket[] {
    const { from, to, ...values } = boundsOf(range);
    const levels = rollupLevelsFor(
      rollupLevels,
      bucketMs,
      range.minValue !== undefined || range.maxValue !== undefined,
    );
    const sums = new BucketSums(bucketMs);
    const pieces = planRollupPieces(from ?? Number.NEGATIVE_INFINITY, to ?? Number.POSITIVE_INFINITY, levels);
    for (const piece of pieces) {
      const source: SumSource =
        piece.level === undefined
          ? readingSource
          : {
              table: piece.level.table,
              column: 'start',
              sums: 'sum(n) AS n, sum(s) AS s, min(lo) AS lo, max(hi) AS hi',
              rowsPerBucket: bucketMs / piece.level.unitMs,
            };
      this.sumTable(source, series, { ...values, from: piece.from, to: piece.to }, bucketMs, sums);
    }
    return sums.newestFirst();
  }

  /**
   * Sums the rows of one series in the bounds per bucket. Up to MAX_BUCKET_QUERIES buckets, one indexed
   * range query each: no sorting, about twice as fast as GROUP BY, whose temporary b-tree dominates (30
   * days of minute rollups into 87-minute buckets). With more buckets, or only a few rows in each (hour
   * rollups into 2-hour buckets), one GROUP BY is cheaper than that many queries.
   */
  private sumTable(
    source: SumSource,
    series: number,
    bounds: { from?: number; to?: number; minValue?: number; maxValue?: number },
    bucketMs: number,
    sums: BucketSums,
  ): void {
    const { table, column } = source;
    const { sql, params } = rangeConditions(bounds, column);
    const span = this.connection
      .prepare(
        `SELECT min(${column}) AS low, max(${column}) AS high FROM ${table} WHERE series = @series${sql}`,
      )
      .get({ ...params, series }) as { low: number | null; high: number | null };
    if (span.low === null || span.high === null) return;
    const firstBucket = Math.floor(span.low / bucketMs) * bucketMs;
    const lastBucket = Math.floor(span.high / bucketMs) * bucketMs;
    if (
      (lastBucket - firstBucket) / bucketMs + 1 > MAX_BUCKET_QUERIES ||
      (source.rowsPerBucket ?? MIN_ROWS_PER_BUCKET_QUERY) < MIN_ROWS_PER_BUCKET_QUERY
    ) {
      const rows = this.connection
        .prepare(
          `SELECT ${bucketStart(column)} AS bucket_start, ${source.sums} FROM ${table}
           WHERE series = @series${sql} GROUP BY bucket_start`,
        )
        .all({ ...params, series, bucket: bucketMs }) as SumRow[];
      for (const { bucket_start: start, n, s, lo, hi } of rows) sums.add(start, { n, s, lo, hi });
      return;
    }
    const inBucket = rangeConditions({ ...bounds, from: 0, to: 0 }, column);
    const query = this.connection.prepare(
      `SELECT ${source.sums} FROM ${table} WHERE series = @series${inBucket.sql}`,
    );
    for (let start = firstBucket; start <= lastBucket; start += bucketMs) {
      const row = query.get({
        ...inBucket.params,
        series,
        from: Math.max(start, bounds.from ?? start),
        to: Math.min(start + bucketMs, bounds.to ?? start + bucketMs),
      }) as Omit<SumRow, 'bucket_start'>;
      if (row.n > 0) sums.add(start, { n: row.n, s: row.s, lo: row.lo, hi: row.hi });
    }
  }
}
