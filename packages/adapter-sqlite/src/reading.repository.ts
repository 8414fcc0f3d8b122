import { inject, injectable } from 'inversify';
import {
  type NewReading,
  type Reading,
  type ReadingBucket,
  type ReadingRange,
  type ReadingRepository,
  type ReadingCursor,
  type ReadingExportSelection,
  type ReadingSelection,
} from '@hortus/core';
import { GroupCommit } from './group-commit.js';
import { SqliteRevisions } from './revisions.js';
import { SQLITE_CONNECTION, type SqliteConnection, SqliteRepository, toDomainError } from './support.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Rollup tables, coarsest first: a summary reads the coarsest level whose unit divides its bucket. */
const rollupLevels = [
  { table: 'rollups_1h', unitMs: HOUR_MS },
  { table: 'rollups_1m', unitMs: MINUTE_MS },
] as const;
type RollupLevel = (typeof rollupLevels)[number];

interface Cell {
  n: number;
  s: number;
  lo: number;
  hi: number;
}
/** Makes every valid Date's milliseconds non-negative, so ids are fixed-width hex. */
const TIME_OFFSET = 8.64e15;

interface ReadingRow {
  series: number;
  time: number;
  value: number;
}

type BucketSum = Cell & { start: number };

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

const readingMapper = {
  /** A reading is named by its series and time, unique by the primary key. */
  toEntity(group: string, topic: string, row: ReadingRow): Reading {
    return {
      id: row.series.toString(16).padStart(10, '0') + (row.time + TIME_OFFSET).toString(16).padStart(14, '0'),
      group,
      topic,
      value: Number(row.value),
      time: new Date(row.time),
    };
  },
};

/** `AND ...` conditions of a range over `column` (time) and `value`, with their named parameters. */
function rangeConditions(
  bounds: { from?: number; to?: number; minValue?: number; maxValue?: number },
  column = 'time',
): { sql: string; params: Record<string, number> } {
  const parts: string[] = [];
  const params: Record<string, number> = {};
  if (bounds.from !== undefined && Number.isFinite(bounds.from)) {
    parts.push(`${column} >= @from`);
    params['from'] = bounds.from;
  }
  if (bounds.to !== undefined && Number.isFinite(bounds.to)) {
    parts.push(`${column} < @to`);
    params['to'] = bounds.to;
  }
  if (bounds.minValue !== undefined) {
    parts.push('value >= @minValue');
    params['minValue'] = bounds.minValue;
  }
  if (bounds.maxValue !== undefined) {
    parts.push('value <= @maxValue');
    params['maxValue'] = bounds.maxValue;
  }
  return { sql: parts.map((part) => ` AND ${part}`).join(''), params };
}

/** The range's bounds as half-open milliseconds `[from, to)` plus the value filters. */
function boundsOf(range: ReadingRange): { from?: number; to?: number; minValue?: number; maxValue?: number } {
  return {
    ...(range.startDate === undefined ? {} : { from: range.startDate.getTime() }),
    ...(range.endDate === undefined ? {} : { to: range.endDate.getTime() + 1 }),
    ...(range.minValue === undefined ? {} : { minValue: range.minValue }),
    ...(range.maxValue === undefined ? {} : { maxValue: range.maxValue }),
  };
}

/** Floor of `column` to a multiple of @bucket, right for negative times too (SQLite's % keeps the sign). */
function bucketStart(column: string): string {
  return `${column} - ((${column} % @bucket) + @bucket) % @bucket`;
}

@injectable()
export class SqliteReadingRepository extends SqliteRepository implements ReadingRepository {
  private readonly revisions: SqliteRevisions;
  /** Series ids never change once committed (series are never deleted), so any process may cache them. */
  private readonly seriesIds = new Map<string, Map<string, number>>();
  private readonly commits: GroupCommit;
  /** Series created by the batches of the group commit under way that have succeeded so far. */
  private createdInCommit: { commit: number; series: [string, string, number][] } = { commit: 0, series: [] };

  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'reading', 'That reading is already stored');
    this.revisions = new SqliteRevisions(connection, 'readings');
    this.commits = new GroupCommit(connection);
  }

  /**
   * One savepoint per batch with prepared statements: the readings, their minute rollups and the revisions
   * of their groups are stored together, in the transaction of a group commit (group-commit.ts) that
   * concurrent batches share; the answer comes after COMMIT.
   */
  async add(readings: readonly NewReading[]): Promise<number> {
    if (readings.length === 0) return 0;
    const { count, created } = await this.run(() =>
      this.commits.run((commit) => {
        if (this.createdInCommit.commit !== commit) this.createdInCommit = { commit, series: [] };
        // Series created by batches of the same commit before this one are visible to it; its own are kept
        // apart until its savepoint holds, since a rollback would take them back.
        const known = [...this.createdInCommit.series];
        const stored = this.store(readings, known);
        this.createdInCommit = { commit, series: known };
        return { count: stored, created: known };
      }),
    ).catch((error: unknown) => {
      throw toDomainError(error, 'reading', 'That reading is already stored');
    });
    // Only after COMMIT: a rolled-back series id must not be remembered.
    for (const [group, topic, id] of created) this.remember(group, topic, id);
    return count;
  }

  /** Inside a write transaction: stores the batch and answers how many readings were new. */
  private store(readings: readonly NewReading[], created: [string, string, number][]): number {
    const insert = this.connection.prepare(
      'INSERT INTO readings (series, time, value) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    // Per level, series and unit start: what this batch adds, merged in JS so each cell is one upsert.
    const cells = rollupLevels.map(() => new Map<number, Map<number, Cell>>());
    const groups = new Set<string>();
    let count = 0;
    for (const { group, topic, value, time } of readings) {
      const series = this.seriesFor(group, topic, created);
      const timeMs = time.getTime();
      if (insert.run(series, timeMs, value).changes !== 1) continue;
      count += 1;
      groups.add(group);
      rollupLevels.forEach((level, index) => addToCell(cells[index], series, level, timeMs, value));
    }
    rollupLevels.forEach((level, index) => {
      const upsert = this.connection.prepare(
        `INSERT INTO ${level.table} (series, start, n, s, lo, hi) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (series, start) DO UPDATE SET n = n + excluded.n, s = s + excluded.s,
           lo = min(lo, excluded.lo), hi = max(hi, excluded.hi)`,
      );
      for (const [series, ofSeries] of cells[index] ?? []) {
        for (const [start, { n, s, lo, hi }] of ofSeries) upsert.run(series, start, n, s, lo, hi);
      }
    });
    this.revisions.bump(groups);
    return count;
  }

  async revision(group: string): Promise<string> {
    return this.run(() => this.revisions.current(group));
  }

  async latest(group: string, topic: string): Promise<Reading | undefined> {
    return this.run(() => {
      const series = this.findSeries(group, topic);
      if (series === undefined) return undefined;
      const row = this.connection
        .prepare('SELECT series, time, value FROM readings WHERE series = ? ORDER BY time DESC LIMIT 1')
        .get(series) as ReadingRow | undefined;
      return row === undefined ? undefined : readingMapper.toEntity(group, topic, row);
    });
  }

  async latestOfEveryTopic(group: string): Promise<Reading[]> {
    return this.run(() => {
      // Per series of the group (in topic order by the unique index), max(time) is one index descent.
      const rows = this.connection
        .prepare(
          `SELECT s.topic, r.series, r.time, r.value FROM series s
           JOIN readings r ON r.series = s.id
             AND r.time = (SELECT max(time) FROM readings WHERE series = s.id)
           WHERE s.grp = ? ORDER BY s.topic`,
        )
        .all(group) as (ReadingRow & { topic: string })[];
      return rows.map((row) => readingMapper.toEntity(group, row.topic, row));
    });
  }

  async newestFirst(range: ReadingRange, limit: number): Promise<Reading[]> {
    if (!(limit > 0)) return [];
    return this.run(() => {
      const series = this.findSeries(range.group, range.topic);
      if (series === undefined) return [];
      const { sql, params } = rangeConditions(boundsOf(range));
      const rows = this.connection
        .prepare(
          `SELECT series, time, value FROM readings WHERE series = @series${sql} ORDER BY time DESC LIMIT @limit`,
        )
        .all({ ...params, series, limit: Math.floor(limit) }) as ReadingRow[];
      return rows.map((row) => readingMapper.toEntity(range.group, range.topic, row));
    });
  }

  async oldest(range: ReadingRange): Promise<Reading | undefined> {
    return this.run(() => {
      const series = this.findSeries(range.group, range.topic);
      if (series === undefined) return undefined;
      const { sql, params } = rangeConditions(boundsOf(range));
      const row = this.connection
        .prepare(
          `SELECT series, time, value FROM readings WHERE series = @series${sql} ORDER BY time LIMIT 1`,
        )
        .get({ ...params, series }) as ReadingRow | undefined;
      return row === undefined ? undefined : readingMapper.toEntity(range.group, range.topic, row);
    });
  }

  /**
   * Whole hours come from the hour rollups and whole minutes from the minute rollups, when the bucket is a
   * whole number of that unit and no value filter applies (a unit then lies inside one bucket); what no
   * level covers whole (the edges of the range) is summarised from the readings. SQLite sums per bucket.
   */
  async aggregate(range: ReadingRange, bucketMs: number): Promise<ReadingBucket[]> {
    return this.run(() => {
      const series = this.findSeries(range.group, range.topic);
      if (series === undefined) return [];
      const bounds = boundsOf(range);
      const sums = new Map<number, BucketSum>();
      if (range.minValue !== undefined || range.maxValue !== undefined) {
        this.sumReadings(series, bounds, bucketMs, sums);
      } else {
        const levels = rollupLevels.filter((level) => bucketMs % level.unitMs === 0);
        this.sumPieces(
          series,
          bounds.from ?? Number.NEGATIVE_INFINITY,
          bounds.to ?? Number.POSITIVE_INFINITY,
          bucketMs,
          levels,
          sums,
        );
      }
      return [...sums.values()]
        .sort((a, b) => b.start - a.start)
        .map(({ start, n, s, lo, hi }) => ({
          time: new Date(start),
          min: lo,
          max: hi,
          avg: s / n,
          count: n,
        }));
    });
  }

  /** Sums `[from, to)`: the whole units of the first level, the edges by the finer levels, then readings. */
  private sumPieces(
    series: number,
    from: number,
    to: number,
    bucketMs: number,
    levels: readonly RollupLevel[],
    sums: Map<number, BucketSum>,
  ): void {
    const [level, ...finer] = levels;
    if (level === undefined) {
      this.sumReadings(series, { from, to }, bucketMs, sums);
      return;
    }
    const first = Math.ceil(from / level.unitMs) * level.unitMs;
    const end = Math.floor(to / level.unitMs) * level.unitMs;
    if (!(first < end)) {
      this.sumPieces(series, from, to, bucketMs, finer, sums);
      return;
    }
    this.sumRollups(level, series, first, end, bucketMs, sums);
    if (from < first) this.sumPieces(series, from, first, bucketMs, finer, sums);
    if (end < to) this.sumPieces(series, end, to, bucketMs, finer, sums);
  }

  private sumReadings(
    series: number,
    bounds: { from?: number; to?: number; minValue?: number; maxValue?: number },
    bucketMs: number,
    sums: Map<number, BucketSum>,
  ): void {
    this.sumTable(readingSource, series, bounds, bucketMs, sums);
  }

  private sumRollups(
    level: RollupLevel,
    series: number,
    from: number,
    to: number,
    bucketMs: number,
    sums: Map<number, BucketSum>,
  ): void {
    this.sumTable(
      {
        table: level.table,
        column: 'start',
        sums: 'sum(n) AS n, sum(s) AS s, min(lo) AS lo, max(hi) AS hi',
        rowsPerBucket: bucketMs / level.unitMs,
      },
      series,
      { from, to },
      bucketMs,
      sums,
    );
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
    sums: Map<number, BucketSum>,
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
      merge(sums, rows);
      return;
    }
    const inBucket = rangeConditions({ ...bounds, from: 0, to: 0 }, column);
    const query = this.connection.prepare(
      `SELECT ${source.sums} FROM ${table} WHERE series = @series${inBucket.sql}`,
    );
    const rows: SumRow[] = [];
    for (let start = firstBucket; start <= lastBucket; start += bucketMs) {
      const row = query.get({
        ...inBucket.params,
        series,
        from: Math.max(start, bounds.from ?? start),
        to: Math.min(start + bucketMs, bounds.to ?? start + bucketMs),
      }) as Omit<SumRow, 'bucket_start'>;
      if (row.n > 0) rows.push({ ...row, bucket_start: start });
    }
    merge(sums, rows);
  }

  /** Keyset paging for exports: see the port. */
  async page(
    { group, topic, from, to }: ReadingExportSelection,
    after: ReadingCursor | undefined,
    limit: number,
  ): Promise<Reading[]> {
    if (!(limit > 0)) return [];
    return this.run(() => {
      // The group's series in topic order from the cursor's topic, then each one's readings by the
      // (series, time) key: index seeks only, however far the export is.
      const series = this.connection
        .prepare(
          `SELECT id, topic FROM series WHERE grp = @group AND topic >= @first${topic === undefined ? '' : ' AND topic = @topic'} ORDER BY topic`,
        )
        .all({ group, first: after?.topic ?? '', ...(topic === undefined ? {} : { topic }) }) as {
        id: number;
        topic: string;
      }[];
      const select = this.connection.prepare(
        'SELECT series, time, value FROM readings WHERE series = @series AND time >= @start AND time <= @end ' +
          'ORDER BY time LIMIT @limit',
      );
      const found: Reading[] = [];
      for (const { id, topic: name } of series) {
        const resume = after !== undefined && name === after.topic ? after.time.getTime() + 1 : -Infinity;
        const rows = select.all({
          series: id,
          start: Math.max(resume, from?.getTime() ?? -Infinity, Number.MIN_SAFE_INTEGER),
          end: Math.min(to?.getTime() ?? Infinity, Number.MAX_SAFE_INTEGER),
          limit: Math.floor(limit) - found.length,
        }) as ReadingRow[];
        for (const row of rows) found.push(readingMapper.toEntity(group, name, row));
        if (found.length >= limit) break;
      }
      return found;
    });
  }

  /**
   * One transaction: the readings go, the rollup cells the span touches are summed again from the readings
   * still stored in them (only the edge units hold any), and the group's revision is bumped. A series left
   * empty keeps its row (series ids are cached and never reused) but holds no readings, so it is no topic.
   */
  async deleteRange({ group, topic, from, to, limit, keepSummaries }: ReadingSelection): Promise<number> {
    return this.run(() =>
      this.connection.write(() => {
        const series =
          topic === undefined
            ? (
                this.connection.prepare('SELECT id FROM series WHERE grp = ?').all(group) as { id: number }[]
              ).map(({ id }) => id)
            : [this.findSeries(group, topic)].filter((id): id is number => id !== undefined);
        const remove = this.connection.prepare(
          'DELETE FROM readings WHERE series = ? AND time >= ? AND time <= ?',
        );
        // With a limit, the span of a series ends at its limit-th oldest reading ((series, time) is unique).
        const nth = this.connection.prepare(
          'SELECT time FROM readings WHERE series = ? AND time >= ? AND time <= ? ORDER BY time LIMIT 1 OFFSET ?',
        );
        let deleted = 0;
        for (const id of series) {
          const left = (limit ?? Number.POSITIVE_INFINITY) - deleted;
          if (left <= 0) break;
          const last = Number.isFinite(left)
            ? ((nth.get(id, from.getTime(), to.getTime(), left - 1) as { time: number } | undefined)?.time ??
              to.getTime())
            : to.getTime();
          const removed = remove.run(id, from.getTime(), last).changes;
          if (removed === 0) continue;
          deleted += removed;
          if (keepSummaries === true) continue;
          for (const level of rollupLevels) {
            const start = Math.floor(from.getTime() / level.unitMs) * level.unitMs;
            const end = (Math.floor(to.getTime() / level.unitMs) + 1) * level.unitMs;
            this.connection
              .prepare(`DELETE FROM ${level.table} WHERE series = ? AND start >= ? AND start < ?`)
              .run(id, start, end);
            this.connection
              .prepare(
                `INSERT INTO ${level.table} (series, start, n, s, lo, hi)
                 SELECT series, ${bucketStart('time')} AS unit_start, count(*), sum(value), min(value), max(value)
                 FROM readings WHERE series = @series AND time >= @start AND time < @end
                 GROUP BY unit_start`,
              )
              .run({ series: id, start, end, bucket: level.unitMs });
          }
        }
        if (deleted > 0) this.revisions.bump([group]);
        return deleted;
      }),
    );
  }

  async groups(): Promise<string[]> {
    return this.run(() =>
      (this.connection.prepare('SELECT DISTINCT grp FROM series').all() as { grp: string }[]).map(
        ({ grp }) => grp,
      ),
    );
  }

  /** One short transaction per series of the group, each a primary-key range of (series, start). */
  async deleteSummariesBefore(group: string, before: Date): Promise<number> {
    return this.run(() => {
      const series = this.connection.prepare('SELECT id FROM series WHERE grp = ?').all(group) as {
        id: number;
      }[];
      let deleted = 0;
      for (const { id } of series) {
        deleted += this.connection.write(() =>
          rollupLevels.reduce(
            (sum, level) =>
              sum +
              this.connection
                .prepare(`DELETE FROM ${level.table} WHERE series = ? AND start < ?`)
                .run(id, before.getTime() - level.unitMs + 1).changes,
            0,
          ),
        );
      }
      return deleted;
    });
  }

  async countTopics(group: string): Promise<number> {
    const row = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT count(*) AS topics FROM series s
             WHERE s.grp = ? AND EXISTS (SELECT 1 FROM readings WHERE series = s.id)`,
          )
          .get(group) as { topics: number },
    );
    return row.topics;
  }

  async knownTopics(group: string, topics: readonly string[]): Promise<string[]> {
    if (topics.length === 0) return [];
    const rows = this.run(
      () =>
        this.connection
          .prepare(
            `SELECT s.topic FROM series s
             WHERE s.grp = ? AND s.topic IN (SELECT value FROM json_each(?))
               AND EXISTS (SELECT 1 FROM readings WHERE series = s.id)`,
          )
          .all(group, JSON.stringify([...new Set(topics)])) as { topic: string }[],
    );
    return rows.map(({ topic }) => topic);
  }

  private findSeries(group: string, topic: string): number | undefined {
    const known = this.seriesIds.get(group)?.get(topic);
    if (known !== undefined) return known;
    const row = this.connection
      .prepare('SELECT id FROM series WHERE grp = ? AND topic = ?')
      .get(group, topic) as { id: number } | undefined;
    if (row !== undefined) this.remember(group, topic, row.id);
    return row?.id;
  }

  /** Inside a write transaction: the series id, created when the series is new (noted in `created`). */
  private seriesFor(group: string, topic: string, created: [string, string, number][]): number {
    // Series created by this transaction first: reading them back from the table would cache an id that a
    // rollback could still take away.
    const known = created.find(([g, t]) => g === group && t === topic)?.[2] ?? this.findSeries(group, topic);
    if (known !== undefined) return known;
    const id = Number(
      this.connection.prepare('INSERT INTO series (grp, topic) VALUES (?, ?)').run(group, topic)
        .lastInsertRowid,
    );
    created.push([group, topic, id]);
    return id;
  }

  private remember(group: string, topic: string, id: number): void {
    let topics = this.seriesIds.get(group);
    if (topics === undefined) this.seriesIds.set(group, (topics = new Map()));
    topics.set(topic, id);
  }
}

function merge(sums: Map<number, BucketSum>, rows: readonly SumRow[]): void {
  for (const { bucket_start: start, n, s, lo, hi } of rows) {
    const sum = sums.get(start);
    if (sum === undefined) {
      sums.set(start, { start, n, s, lo, hi });
      continue;
    }
    sum.n += n;
    sum.s += s;
    if (lo < sum.lo) sum.lo = lo;
    if (hi > sum.hi) sum.hi = hi;
  }
}

function addToCell(
  cells: Map<number, Map<number, Cell>> | undefined,
  series: number,
  level: RollupLevel,
  timeMs: number,
  value: number,
): void {
  if (cells === undefined) return;
  const start = Math.floor(timeMs / level.unitMs) * level.unitMs;
  let ofSeries = cells.get(series);
  if (ofSeries === undefined) cells.set(series, (ofSeries = new Map()));
  const cell = ofSeries.get(start);
  if (cell === undefined) {
    ofSeries.set(start, { n: 1, s: value, lo: value, hi: value });
    return;
  }
  cell.n += 1;
  cell.s += value;
  if (value < cell.lo) cell.lo = value;
  if (value > cell.hi) cell.hi = value;
}
