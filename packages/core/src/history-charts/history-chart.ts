import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject, optionalText, requireNumber, requireText } from '../shared/validation.js';

/** Free-form chart settings as clients write them (type, max_count, data_interval, update_interval, datasets, ...). */
export type ChartData = Readonly<Record<string, unknown>>;

export interface Chart {
  readonly chartId: string;
  readonly chartName: string;
  readonly chartData: ChartData;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One record per user holding that user's charts in the order they were added. */
export interface HistoryChart {
  readonly id: string;
  readonly userId: string;
  readonly charts: readonly Chart[];
}

export const DEFAULT_CHART_ID = 'defaultId';
export const DEFAULT_CHART_NAME = 'Default Name';
/** docs/api.md, History charts: every added chart polls every 15000 ms, whatever the client asked for. */
export const FORCED_UPDATE_INTERVAL = 15000;
export const MAX_CHART_DATA_BYTES = 32 * 1024;
/** Bounds one user's record, which is read whole on every chart route: the default of MAX_CHARTS_PER_USER. */
export const MAX_CHARTS_PER_USER = 200;

/** The chartData fields the change_* routes set. */
export const chartDataFields = ['type', 'data_interval', 'update_interval', 'max_count'] as const;
export type ChartDataField = (typeof chartDataFields)[number];

export type ChartChange =
  | { readonly kind: 'set-field'; readonly field: ChartDataField; readonly value: string | number }
  | { readonly kind: 'set-dataset-flag'; readonly flag: string; readonly checked: boolean };

const dataTypePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/u;

export function requireUserId(value: unknown): string {
  return requireText(value, 'userId', 128);
}

export function requireChartName(value: unknown): string {
  return requireText(value, 'chartName', 200);
}

/** Only a plain identifier may become part of a field name (`checked_<dataTyp>`). */
export function datasetFlag(dataTyp: unknown): string {
  if (typeof dataTyp !== 'string' || !dataTypePattern.test(dataTyp)) {
    throw InvalidInputError.forField('dataTyp', 'must be a plain identifier (letters, digits, _)');
  }
  return `checked_${dataTyp}`;
}

export function requireChecked(value: unknown): boolean {
  if (typeof value !== 'boolean') throw InvalidInputError.forField('checked', 'must be true or false');
  return value;
}

/** Validates the value of one change_* route: a short text for type, a non-negative number for the rest. */
export function chartFieldValue(field: ChartDataField, value: unknown): string | number {
  if (field === 'type') return requireText(value, 'type', 32);
  const number = requireNumber(value, field);
  if (field === 'max_count') {
    if (!Number.isInteger(number) || number < 1 || number > 100_000) {
      throw InvalidInputError.forField(field, 'must be a whole number from 1 to 100000');
    }
    return number;
  }
  if (number < 0 || number > 366 * 24 * 3_600_000) {
    throw InvalidInputError.forField(field, 'must be a number of milliseconds from 0 to one year');
  }
  return number;
}

/** The flags of a dataset the web client reads, one per data type of the history page. */
export const datasetFlags = [
  'checked_temperature',
  'checked_humidity',
  'checked_lux',
  'checked_moisture_1',
  'checked_moisture_2',
  'checked_moisture_3',
] as const;

/**
 * The original's chart defaults (COMPAT): the client reads type, max_count, data_interval,
 * update_interval and datasets[0].checked_* of every chart, and asks for `count=<max_count>`.
 */
export const chartDefaults = {
  type: 'line',
  max_count: 100,
  data_interval: 1,
  update_interval: FORCED_UPDATE_INTERVAL,
  labels: [] as readonly unknown[],
} as const;

/**
 * chartData with every default the client needs filled in where it is missing: what a new chart is given,
 * and how a stored chart written without them (by an older client or service) is read. The original gave
 * an empty datasets list and false to each flag of a dataset; the one dataset holding false flags is
 * given here too, since the client reads datasets[0] directly.
 */
export function withChartDefaults(chartData: ChartData): ChartData {
  const datasets = Array.isArray(chartData['datasets']) ? (chartData['datasets'] as unknown[]) : [];
  const first: unknown = datasets[0];
  const flags = Object.fromEntries(datasetFlags.map((flag) => [flag, false]));
  const firstWithFlags = isPlainObject(first) ? { ...flags, ...first } : flags;
  return {
    ...chartDefaults,
    labels: [],
    ...chartData,
    datasets: [firstWithFlags, ...datasets.slice(1)],
  };
}

/** A record with every chart's defaults filled in (see withChartDefaults). */
export function historyChartWithDefaults(record: HistoryChart): HistoryChart {
  return {
    ...record,
    charts: record.charts.map((chart) => ({ ...chart, chartData: withChartDefaults(chart.chartData) })),
  };
}

export function newChart(
  input: { chartId?: unknown; chartName?: unknown; chartData?: unknown },
  now: Date,
): Chart {
  const chartData = input.chartData ?? {};
  if (!isPlainObject(chartData)) throw InvalidInputError.forField('chartData', 'must be an object');
  const encoded = JSON.stringify(chartData);
  if (new TextEncoder().encode(encoded).length > MAX_CHART_DATA_BYTES) {
    throw InvalidInputError.forField('chartData', `must be at most ${MAX_CHART_DATA_BYTES} bytes of JSON`);
  }
  return {
    chartId: optionalText(input.chartId, 'chartId', 200) ?? DEFAULT_CHART_ID,
    chartName: optionalText(input.chartName, 'chartName', 200) ?? DEFAULT_CHART_NAME,
    chartData: withChartDefaults({
      ...(JSON.parse(encoded) as Record<string, unknown>),
      update_interval: FORCED_UPDATE_INTERVAL,
    }),
    createdAt: now,
    updatedAt: now,
  };
}

/** Applies a change to one chart; the memory adapter uses it and the Mongo adapter mirrors it in updates. */
export function applyChartChange(chart: Chart, change: ChartChange, now: Date): Chart {
  if (change.kind === 'set-field') {
    return { ...chart, chartData: { ...chart.chartData, [change.field]: change.value }, updatedAt: now };
  }
  const datasets = Array.isArray(chart.chartData['datasets'])
    ? [...(chart.chartData['datasets'] as unknown[])]
    : [];
  const first = isPlainObject(datasets[0]) ? datasets[0] : {};
  datasets[0] = { ...first, [change.flag]: change.checked };
  return { ...chart, chartData: { ...chart.chartData, datasets }, updatedAt: now };
}

export const chartNotFound = 'No history chart found.';
