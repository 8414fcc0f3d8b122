import { injectable } from 'inversify';
import {
  applyChartChange,
  type Chart,
  type ChartChange,
  type HistoryChart,
  type HistoryChartRepository,
} from '@hortus/core';
import { newId } from './ids.js';

interface StoredHistoryChart {
  readonly id: string;
  readonly userId: string;
  charts: Chart[];
}

function copyChart(chart: Chart): Chart {
  return {
    chartId: chart.chartId,
    chartName: chart.chartName,
    chartData: structuredClone(chart.chartData),
    createdAt: new Date(chart.createdAt.getTime()),
    updatedAt: new Date(chart.updatedAt.getTime()),
  };
}

function toHistoryChart(stored: StoredHistoryChart): HistoryChart {
  return { id: stored.id, userId: stored.userId, charts: stored.charts.map(copyChart) };
}

/** One record per user; every change runs synchronously, so concurrent appends cannot lose each other. */
@injectable()
export class InMemoryHistoryChartRepository implements HistoryChartRepository {
  private readonly byUser = new Map<string, StoredHistoryChart>();

  async findByUser(userId: string): Promise<HistoryChart | undefined> {
    const stored = this.byUser.get(userId);
    return stored === undefined ? undefined : toHistoryChart(stored);
  }

  async appendChart(userId: string, chart: Chart): Promise<HistoryChart> {
    let stored = this.byUser.get(userId);
    if (stored === undefined) {
      stored = { id: newId(), userId, charts: [] };
      this.byUser.set(userId, stored);
    }
    stored.charts.push(copyChart(chart));
    return toHistoryChart(stored);
  }

  async restore(record: HistoryChart): Promise<void> {
    this.byUser.set(record.userId, {
      id: record.id,
      userId: record.userId,
      charts: record.charts.map(copyChart),
    });
  }

  async userIds(): Promise<string[]> {
    return [...this.byUser.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  async updateChart(
    userId: string,
    chartName: string,
    change: ChartChange,
    now: Date,
  ): Promise<HistoryChart | undefined> {
    const stored = this.byUser.get(userId);
    const index = stored?.charts.findIndex((chart) => chart.chartName === chartName) ?? -1;
    if (stored === undefined || index < 0) return undefined;
    stored.charts[index] = copyChart(applyChartChange(stored.charts[index] as Chart, change, now));
    return toHistoryChart(stored);
  }

  async removeCharts(userId: string, chartName: string): Promise<HistoryChart | undefined> {
    const stored = this.byUser.get(userId);
    if (stored === undefined) return undefined;
    stored.charts = stored.charts.filter((chart) => chart.chartName !== chartName);
    return toHistoryChart(stored);
  }
}
