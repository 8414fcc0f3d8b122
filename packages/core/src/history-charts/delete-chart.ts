import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { chartNotFound, type HistoryChart, historyChartWithDefaults } from './history-chart.js';
import { HISTORY_CHART_REPOSITORY, type HistoryChartRepository } from './history-chart.port.js';

export const noChartRecord = 'No chart found with this ID.';

@injectable()
export class DeleteChart {
  constructor(@inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository) {}

  /** Removes every chart of that name (COMPAT): no record and no such chart are two different not-founds. */
  async execute(input: { userId: unknown; chartName: unknown }): Promise<HistoryChart> {
    const record = typeof input.userId === 'string' ? await this.charts.findByUser(input.userId) : undefined;
    if (record === undefined) throw new NotFoundError('history-chart', noChartRecord);
    if (!record.charts.some((chart) => chart.chartName === input.chartName)) {
      throw new NotFoundError('history-chart', chartNotFound);
    }
    const updated = await this.charts.removeCharts(record.userId, String(input.chartName));
    if (updated === undefined) throw new NotFoundError('history-chart', noChartRecord);
    return historyChartWithDefaults(updated);
  }
}
