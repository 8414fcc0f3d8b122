import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import {
  type ChartChange,
  type ChartDataField,
  chartFieldValue,
  chartNotFound,
  datasetFlag,
  type HistoryChart,
  historyChartWithDefaults,
  requireChecked,
} from './history-chart.js';
import { HISTORY_CHART_REPOSITORY, type HistoryChartRepository } from './history-chart.port.js';

/** Serves every change_* route: one chartData field, or one `checked_<dataTyp>` flag of datasets[0]. */
@injectable()
export class ChangeChart {
  constructor(
    @inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async setField(input: {
    userId: unknown;
    chartName: unknown;
    field: ChartDataField;
    value: unknown;
  }): Promise<HistoryChart> {
    return this.apply(input.userId, input.chartName, {
      kind: 'set-field',
      field: input.field,
      value: chartFieldValue(input.field, input.value),
    });
  }

  async setDatasetFlag(input: {
    userId: unknown;
    chartName: unknown;
    dataTyp: unknown;
    checked: unknown;
  }): Promise<HistoryChart> {
    return this.apply(input.userId, input.chartName, {
      kind: 'set-dataset-flag',
      flag: datasetFlag(input.dataTyp),
      checked: requireChecked(input.checked),
    });
  }

  private async apply(userId: unknown, chartName: unknown, change: ChartChange): Promise<HistoryChart> {
    const updated =
      typeof userId === 'string' && typeof chartName === 'string'
        ? await this.charts.updateChart(userId, chartName, change, this.clock.now())
        : undefined;
    if (updated === undefined) throw new NotFoundError('history-chart', chartNotFound);
    return historyChartWithDefaults(updated);
  }
}
