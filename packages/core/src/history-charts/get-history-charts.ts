import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { chartNotFound, type HistoryChart, historyChartWithDefaults } from './history-chart.js';
import { HISTORY_CHART_REPOSITORY, type HistoryChartRepository } from './history-chart.port.js';

@injectable()
export class GetHistoryCharts {
  constructor(@inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository) {}

  async execute(input: { userId: unknown }): Promise<HistoryChart> {
    const record = typeof input.userId === 'string' ? await this.charts.findByUser(input.userId) : undefined;
    if (record === undefined) throw new NotFoundError('history-chart', chartNotFound);
    return historyChartWithDefaults(record);
  }
}
