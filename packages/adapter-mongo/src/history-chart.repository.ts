import { inject, injectable } from 'inversify';
import { type Db, type Document, type Filter, type ObjectId, type UpdateFilter } from 'mongodb';
import {
  applyChartChange,
  type Chart,
  type ChartChange,
  type ChartData,
  ConflictError,
  type HistoryChart,
  type HistoryChartRepository,
} from '@hortus/core';
import {
  type CollectionSpec,
  fromStoredJson,
  isDuplicateKeyError,
  isLiteralObject,
  MONGO_DB,
  MongoRepository,
  toDate,
  toStoredJson,
} from './support.js';

interface ChartDocument {
  chartId: string;
  chartName: string;
  chartData: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

interface HistoryChartDocument {
  _id: ObjectId;
  userId: string;
  charts: ChartDocument[];
}

export const historyChartCollection: CollectionSpec = {
  name: 'historycharts',
  indexes: [{ key: { userId: 1 }, name: 'userId_unique', unique: true }],
};

/** How often a guarded update is retried when a concurrent change moved the chart it aimed at. */
const GUARDED_ATTEMPTS = 5;

const chartMapper = {
  toDocument(chart: Chart): ChartDocument {
    return {
      chartId: chart.chartId,
      chartName: chart.chartName,
      chartData: toStoredJson(chart.chartData) as Record<string, unknown>,
      createdAt: new Date(chart.createdAt.getTime()),
      updatedAt: new Date(chart.updatedAt.getTime()),
    };
  },
  toEntity(document: ChartDocument): Chart {
    return {
      chartId: String(document.chartId),
      chartName: String(document.chartName),
      chartData: isLiteralObject(document.chartData) ? (fromStoredJson(document.chartData) as ChartData) : {},
      createdAt: toDate(document.createdAt),
      updatedAt: toDate(document.updatedAt),
    };
  },
};

function chartsOf(document: HistoryChartDocument): ChartDocument[] {
  return Array.isArray(document.charts) ? document.charts.filter(isLiteralObject) : [];
}

const historyChartMapper = {
  toEntity(document: HistoryChartDocument): HistoryChart {
    return {
      id: document._id.toHexString(),
      userId: document.userId,
      charts: chartsOf(document).map(chartMapper.toEntity),
    };
  },
};

/**
 * The update applying `change` to the chart at `index`, and what must still hold for it to be right.
 * Paths name the index (`charts.<i>.…`): FerretDB v1 has neither the positional `$` nor arrayFilters.
 */
function chartUpdate(
  index: number,
  stored: ChartDocument,
  change: ChartChange,
  now: Date,
): { guard: Document; set: Document } {
  const at = `charts.${index}`;
  const guard: Document = { [`${at}.chartName`]: stored.chartName };
  const set: Document = { [`${at}.updatedAt`]: now };
  const chartData = stored.chartData;
  if (!isLiteralObject(chartData)) {
    // An older record without chart data: write the whole changed object.
    set[`${at}.chartData`] = toStoredJson(
      applyChartChange(chartMapper.toEntity(stored), change, now).chartData,
    );
    return { guard, set };
  }
  if (change.kind === 'set-field') {
    set[`${at}.chartData.${change.field}`] = change.value;
    return { guard, set };
  }
  const datasets = chartData['datasets'];
  if (Array.isArray(datasets) && isLiteralObject(datasets[0])) {
    set[`${at}.chartData.datasets.0.${change.flag}`] = change.checked;
    guard[`${at}.chartData.datasets.0`] = { $type: 'object' };
    return { guard, set };
  }
  // No first dataset object yet: write the datasets as the domain rule builds them, unless they changed since.
  const changed = applyChartChange(chartMapper.toEntity(stored), change, now);
  set[`${at}.chartData.datasets`] = toStoredJson(changed.chartData['datasets']);
  guard[`${at}.chartData.datasets`] = datasets === undefined ? { $exists: false } : datasets;
  return { guard, set };
}

@injectable()
export class MongoHistoryChartRepository
  extends MongoRepository<HistoryChartDocument>
  implements HistoryChartRepository
{
  constructor(@inject(MONGO_DB) db: Db) {
    super(db, historyChartCollection, 'history-chart', 'The user already has a history chart record');
  }

  async findByUser(userId: string): Promise<HistoryChart | undefined> {
    const document = await this.run(() => this.collection.findOne({ userId }));
    return document === null ? undefined : historyChartMapper.toEntity(document);
  }

  async appendChart(userId: string, chart: Chart): Promise<HistoryChart> {
    // $push is atomic on MongoDB, so concurrent appends all land; the upsert creates the first record.
    const append = (): Promise<HistoryChartDocument | null> =>
      this.collection.findOneAndUpdate(
        { userId },
        { $push: { charts: chartMapper.toDocument(chart) } },
        { upsert: true, returnDocument: 'after' },
      );
    const document = await this.run(async () => {
      try {
        return await append();
      } catch (error) {
        // Two first appends raced to create the record; the loser's retry is a plain append.
        if (isDuplicateKeyError(error)) return append();
        throw error;
      }
    });
    if (document === null) throw new Error('An upsert answered no document');
    return historyChartMapper.toEntity(document);
  }

  async updateChart(
    userId: string,
    chartName: string,
    change: ChartChange,
    now: Date,
  ): Promise<HistoryChart | undefined> {
    for (let attempt = 0; attempt < GUARDED_ATTEMPTS; attempt += 1) {
      const record = await this.run(() => this.collection.findOne({ userId }));
      if (record === null) return undefined;
      const charts = Array.isArray(record.charts) ? record.charts : [];
      const index = charts.findIndex((chart) => isLiteralObject(chart) && chart.chartName === chartName);
      const stored = charts[index];
      if (stored === undefined) return undefined;
      const { guard, set } = chartUpdate(index, stored, change, now);
      const updated = await this.run(() =>
        this.collection.findOneAndUpdate(
          { _id: record._id, ...guard } as Filter<HistoryChartDocument>,
          { $set: set } as UpdateFilter<HistoryChartDocument>,
          { returnDocument: 'after' },
        ),
      );
      if (updated !== null) return historyChartMapper.toEntity(updated);
    }
    throw new ConflictError('history-chart', 'The charts kept changing while being updated; try again');
  }

  async removeCharts(userId: string, chartName: string): Promise<HistoryChart | undefined> {
    let record = await this.run(() =>
      this.collection.findOneAndUpdate(
        { userId },
        { $pull: { charts: { chartName } } } as UpdateFilter<HistoryChartDocument>,
        { returnDocument: 'after' },
      ),
    );
    // FerretDB v1 ignores a condition in $pull but removes an element equal to the value given, which
    // MongoDB does too: pull each leftover chart by its stored value. Each pass removes at least one,
    // unless a concurrent change rewrote it, which the next pass sees.
    for (let pass = 0; record !== null; pass += 1) {
      const current: HistoryChartDocument = record;
      const leftover = chartsOf(current).find((chart) => chart.chartName === chartName);
      if (leftover === undefined) return historyChartMapper.toEntity(current);
      if (pass >= chartsOf(current).length + GUARDED_ATTEMPTS) {
        throw new ConflictError('history-chart', 'The charts kept changing while being removed; try again');
      }
      record = await this.run(() =>
        this.collection.findOneAndUpdate(
          { _id: current._id },
          { $pull: { charts: leftover } } as UpdateFilter<HistoryChartDocument>,
          { returnDocument: 'after' },
        ),
      );
    }
    return undefined;
  }
}
