import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { QuotaExceededError } from '../shared/errors.js';
import { CORE_LIMITS, type CoreLimits } from '../shared/settings.js';
import { type HistoryChart, historyChartWithDefaults, newChart, requireUserId } from './history-chart.js';
import { HISTORY_CHART_REPOSITORY, type HistoryChartRepository } from './history-chart.port.js';

@injectable()
export class AddChart {
  constructor(
    @inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_LIMITS) private readonly limits: CoreLimits,
  ) {}

  /** Appends a chart with the defaults of docs/api.md (History charts); duplicate names are allowed, as in the old service. */
  async execute(input: {
    userId: unknown;
    chartId?: unknown;
    chartName?: unknown;
    chartData?: unknown;
  }): Promise<HistoryChart> {
    const userId = requireUserId(input.userId);
    const chart = newChart(input, this.clock.now());
    const existing = await this.charts.findByUser(userId);
    const cap = this.limits.maxChartsPerUser;
    if (existing !== undefined && existing.charts.length >= cap) {
      throw new QuotaExceededError('history-chart', cap, `A user may keep at most ${cap} charts`);
    }
    return historyChartWithDefaults(await this.charts.appendChart(userId, chart));
  }
}
