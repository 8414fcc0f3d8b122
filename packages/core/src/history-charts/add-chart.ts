import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError } from '../shared/errors.js';
import { type HistoryChart, MAX_CHARTS_PER_USER, newChart, requireUserId } from './history-chart.js';
import { HISTORY_CHART_REPOSITORY, type HistoryChartRepository } from './history-chart.port.js';

@injectable()
export class AddChart {
  constructor(
    @inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Appends a chart with SPEC's defaults; duplicate names are allowed, as in the old service. */
  async execute(input: {
    userId: unknown;
    chartId?: unknown;
    chartName?: unknown;
    chartData?: unknown;
  }): Promise<HistoryChart> {
    const userId = requireUserId(input.userId);
    const chart = newChart(input, this.clock.now());
    const existing = await this.charts.findByUser(userId);
    if (existing !== undefined && existing.charts.length >= MAX_CHARTS_PER_USER) {
      throw new ConflictError('history-chart', `A user may keep at most ${MAX_CHARTS_PER_USER} charts`);
    }
    return this.charts.appendChart(userId, chart);
  }
}
