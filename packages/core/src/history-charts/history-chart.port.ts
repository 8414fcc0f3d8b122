import { type Chart, type ChartChange, type HistoryChart } from './history-chart.js';

export interface HistoryChartRepository {
  findByUser(userId: string): Promise<HistoryChart | undefined>;
  /**
   * Appends the chart to the user's record, creating the record when there is none. Concurrent appends
   * for one user must all land.
   */
  appendChart(userId: string, chart: Chart): Promise<HistoryChart>;
  /**
   * Applies the change to the first chart named `chartName` and sets its updatedAt to `now`.
   * Undefined when the user has no record or no chart of that name.
   */
  updateChart(
    userId: string,
    chartName: string,
    change: ChartChange,
    now: Date,
  ): Promise<HistoryChart | undefined>;
  /**
   * Stores a user's record copied from another store as it is, its id and times too (`hortus store
   * copy`), replacing the user's record: copying it again changes nothing.
   */
  restore(record: HistoryChart): Promise<void>;
  /** The userId of every record (any text clients used, not only users' ids), in code-unit order. */
  userIds(): Promise<string[]>;
  /** Removes every chart named `chartName`; undefined when the user has no record. */
  removeCharts(userId: string, chartName: string): Promise<HistoryChart | undefined>;
}

export const HISTORY_CHART_REPOSITORY = Symbol.for('hortus.HistoryChartRepository');
