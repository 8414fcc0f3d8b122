import { inject, injectable } from 'inversify';
import {
  applyChartChange,
  type Chart,
  type ChartChange,
  type ChartData,
  type HistoryChart,
  type HistoryChartRepository,
} from '@hortus/core';
import { fromJson, newId, SQLITE_CONNECTION, type SqliteConnection, SqliteRepository } from './support.js';

interface HistoryChartRow {
  id: string;
  user_id: string;
  /** JSON array of StoredChart. */
  charts: string;
}

interface StoredChart {
  chartId: string;
  chartName: string;
  chartData: ChartData;
  createdAt: number;
  updatedAt: number;
}

const chartMapper = {
  toStored(chart: Chart): StoredChart {
    return {
      chartId: chart.chartId,
      chartName: chart.chartName,
      chartData: chart.chartData,
      createdAt: chart.createdAt.getTime(),
      updatedAt: chart.updatedAt.getTime(),
    };
  },
  toEntity(stored: StoredChart): Chart {
    return {
      chartId: String(stored.chartId),
      chartName: String(stored.chartName),
      chartData:
        typeof stored.chartData === 'object' && stored.chartData !== null
          ? stored.chartData
          : ({} as ChartData),
      createdAt: new Date(stored.createdAt),
      updatedAt: new Date(stored.updatedAt),
    };
  },
};

function storedCharts(row: HistoryChartRow): StoredChart[] {
  const charts = fromJson(row.charts);
  return Array.isArray(charts) ? (charts as StoredChart[]) : [];
}

const historyChartMapper = {
  toEntity(row: HistoryChartRow): HistoryChart {
    return { id: row.id, userId: row.user_id, charts: storedCharts(row).map(chartMapper.toEntity) };
  },
};

/**
 * One row per user, the charts as one JSON array. Every change reads and rewrites the row inside one write
 * transaction, so concurrent changes (from this process or another) never lose each other.
 */
@injectable()
export class SqliteHistoryChartRepository extends SqliteRepository implements HistoryChartRepository {
  constructor(@inject(SQLITE_CONNECTION) connection: SqliteConnection) {
    super(connection, 'history-chart', 'The user already has a history chart record');
  }

  async findByUser(userId: string): Promise<HistoryChart | undefined> {
    const row = this.run(() => this.find(userId));
    return row === undefined ? undefined : historyChartMapper.toEntity(row);
  }

  async appendChart(userId: string, chart: Chart): Promise<HistoryChart> {
    const row = this.run(() =>
      this.connection.write(() => {
        const stored = this.find(userId);
        if (stored === undefined) {
          const created = {
            id: newId(),
            user_id: userId,
            charts: JSON.stringify([chartMapper.toStored(chart)]),
          };
          this.connection
            .prepare('INSERT INTO history_charts (id, user_id, charts) VALUES (@id, @user_id, @charts)')
            .run(created);
          return created;
        }
        return this.save(stored, [...storedCharts(stored), chartMapper.toStored(chart)]);
      }),
    );
    return historyChartMapper.toEntity(row);
  }

  async restore(record: HistoryChart): Promise<void> {
    this.run(() =>
      this.connection.write(() => {
        this.connection
          .prepare('DELETE FROM history_charts WHERE user_id = ? AND id <> ?')
          .run(record.userId, record.id);
        this.connection
          .prepare(
            `INSERT INTO history_charts (id, user_id, charts) VALUES (?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, charts = excluded.charts`,
          )
          .run(record.id, record.userId, JSON.stringify(record.charts.map(chartMapper.toStored)));
      }),
    );
  }

  async userIds(): Promise<string[]> {
    return this.run(() =>
      (
        this.connection.prepare('SELECT user_id FROM history_charts ORDER BY user_id').all() as {
          user_id: string;
        }[]
      ).map((row) => row.user_id),
    );
  }

  async updateChart(
    userId: string,
    chartName: string,
    change: ChartChange,
    now: Date,
  ): Promise<HistoryChart | undefined> {
    const row = this.run(() =>
      this.connection.write(() => {
        const stored = this.find(userId);
        if (stored === undefined) return undefined;
        const charts = storedCharts(stored);
        const index = charts.findIndex((chart) => chart.chartName === chartName);
        const chart = charts[index];
        if (chart === undefined) return undefined;
        charts[index] = chartMapper.toStored(applyChartChange(chartMapper.toEntity(chart), change, now));
        return this.save(stored, charts);
      }),
    );
    return row === undefined ? undefined : historyChartMapper.toEntity(row);
  }

  async removeCharts(userId: string, chartName: string): Promise<HistoryChart | undefined> {
    const row = this.run(() =>
      this.connection.write(() => {
        const stored = this.find(userId);
        if (stored === undefined) return undefined;
        const charts = storedCharts(stored);
        const kept = charts.filter((chart) => chart.chartName !== chartName);
        return kept.length === charts.length ? stored : this.save(stored, kept);
      }),
    );
    return row === undefined ? undefined : historyChartMapper.toEntity(row);
  }

  private find(userId: string): HistoryChartRow | undefined {
    return this.connection
      .prepare('SELECT id, user_id, charts FROM history_charts WHERE user_id = ?')
      .get(userId) as HistoryChartRow | undefined;
  }

  private save(stored: HistoryChartRow, charts: readonly StoredChart[]): HistoryChartRow {
    const row = { ...stored, charts: JSON.stringify(charts) };
    this.connection.prepare('UPDATE history_charts SET charts = @charts WHERE id = @id').run(row);
    return row;
  }
}
