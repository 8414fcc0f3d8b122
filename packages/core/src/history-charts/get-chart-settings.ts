import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { type ChartData, chartNotFound, withChartDefaults } from './history-chart.js';
import { HISTORY_CHART_REPOSITORY, type HistoryChartRepository } from './history-chart.port.js';

@injectable()
export class GetChartSettings {
  constructor(@inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository) {}

  /** The chartData of the user's first chart with that name; a missing record or chart is a not-found. */
  async execute(input: { userId: unknown; chartName: unknown }): Promise<ChartData> {
    const record = typeof input.userId === 'string' ? await this.charts.findByUser(input.userId) : undefined;
    const chart = record?.charts.find((candidate) => candidate.chartName === input.chartName);
    if (chart === undefined) throw new NotFoundError('history-chart', chartNotFound);
    return withChartDefaults(chart.chartData);
  }
}
