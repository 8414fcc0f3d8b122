import { inject, injectable } from 'inversify';
import {
  BucketSums,
  type NewReading,
  type Reading,
  type ReadingBucket,
  type ReadingRange,
  type ReadingRepository,
  type ReadingCursor,
  mergeInTimeOrder,
  type ReadingScan,
  type ReadingExportSelection,
  type ReadingSelection,
} from '@hortus/core';
import { GroupCommit } from './group-commit.js';
import {
  boundsOf,
  bucketStart,
  rangeConditions,
  type ReadingRow,
  readingMapper,
  rollupLevels,
} from './reading-sql.js';
import { SqliteReadingSums } from './reading-sums.js';
import { SqliteRevisions } from './revisions.js';
import { SQLITE_CONNECTION, type SqliteConnection, SqliteRepository, toDomainError } from './support.js';

@injectable()
export class SqliteReadingRepository extends SqliteRepository implements ReadingRepository {
  private readonly revisions: SqliteRevisions;
  /** Series ids never change once committed (series are never deleted), so any process may cache them. */
  private readonly seriesIds = new Map<string, Map<string, number>>();
  private readonly commits: GroupCommit;
  private readonly sums: SqliteReadingSums;
  /** Series created by the batches of the group commit under way that have succeeded so far. */
  private createdInCommit: { commit: number; series: [string, string, number][] } = { commit: 0, series: [] };

  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'reading', 'That reading is already stored');
    this.revisions = new SqliteRevisions(connection, 'readings');
    this.commits = new GroupCommit(connection);
    this.sums = new SqliteReadingSums(connection);
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
    // Per level and series, the cells this batch adds (core's BucketSums by the level's unit), so each cell
    // is one upsert.
    const cells = rollupLevels.map((level) => ({ level, bySeries: new Map<number, BucketSums>() }));
    const groups = new Set<string>();
    let count = 0;
    for (const { group, topic, value, time } of readings) {
      const series = this.seriesFor(group, topic, created);
      const timeMs = time.getTime();
      if (insert.run(series, timeMs, value).changes !== 1) continue;
      count += 1;
      groups.add(group);
      for (const { level, bySeries } of cells) {
        let ofSeries = bySeries.get(series);
        if (ofSeries === undefined) bySeries.set(series, (ofSeries = new BucketSums(level.unitMs)));
        ofSeries.addValue(timeMs, value);
      }
    }
    for (const { level, bySeries } of cells) {
      const upsert = this.connection.prepare(
        `INSERT INTO ${level.table} (series, start, n, s, lo, hi) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (series, start) DO UPDATE SET n = n + excluded.n, s = s + excluded.s,
           lo = min(lo, excluded.lo), hi = max(hi, excluded.hi)`,
      );
      for (const [series, ofSeries] of bySeries) {
        for (const [start, { n, s, lo, hi }] of ofSeries.entries()) upsert.run(series, start, n, s, lo, hi);
      }
    }
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

  /** Summed by SqliteReadingSums, from the rollups where they cover whole units. */
  async aggregate(range: ReadingRange, bucketMs: number): Promise<ReadingBucket[]> {
    return this.run(() => {
      const series = this.findSeries(range.group, range.topic);
      return series === undefined ? [] : this.sums.aggregate(series, range, bucketMs);
    });
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
        if (deleted > 0) {
          this.revisions.bump([group]);
          this.reclaim();
        }
        return deleted;
      }),
    );
  }

  /**
   * Gives the pages a delete freed back to the file system, in the delete's transaction, so the file
   * shrinks batch by batch (a file in auto_vacuum=INCREMENTAL, see SqliteStore; a no-op in any other).
   * Its cost is moving the pages at the file's end into the freed ones: about the size of the batch.
   */
  private reclaim(): void {
    // exec, not a prepared statement's run(): each step of this pragma frees one page, exec steps to the end.
    this.connection.database.exec('PRAGMA incremental_vacuum');
  }

  /** The merge of one (series, time) index seek per topic and page: see the port. */
  scanInTimeOrder(scan: ReadingScan, pageSize: number): AsyncIterable<readonly Reading[]> {
    // Rows as arrays, and each series' part of the ids made once: a backtest scans millions of rows.
    const select = this.connection
      .prepare(
        'SELECT time, value FROM readings WHERE series = ? AND time >= ? AND time <= ? ORDER BY time LIMIT ?',
      )
      .raw(true);
    return mergeInTimeOrder(scan, pageSize, async (topic, fromMs, toMs, limit) =>
      this.run(() => {
        const series = this.findSeries(scan.group, topic);
        if (series === undefined) return [];
        const rows = select.all(series, fromMs, toMs, limit) as [number, number][];
        return readingMapper.entitiesOfSeries(scan.group, topic, series, rows);
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
        deleted += this.connection.write(() => {
          const removed = rollupLevels.reduce(
            (sum, level) =>
              sum +
              this.connection
                .prepare(`DELETE FROM ${level.table} WHERE series = ? AND start < ?`)
                .run(id, before.getTime() - level.unitMs + 1).changes,
            0,
          );
          if (removed > 0) this.reclaim();
          return removed;
        });
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
