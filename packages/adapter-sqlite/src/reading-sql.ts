import { type Reading, type ReadingRange } from '@hortus/core';

// The SQL shapes of readings shared by the repository and its summaries: the rollup tables, rows, the
// mapping to entities and range conditions.

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Rollup tables, coarsest first: a summary reads the coarsest level whose unit divides its bucket. */
export const rollupLevels = [
  { table: 'rollups_1h', unitMs: HOUR_MS },
  { table: 'rollups_1m', unitMs: MINUTE_MS },
] as const;

/** Makes every valid Date's milliseconds non-negative, so ids are fixed-width hex. */
const TIME_OFFSET = 8.64e15;

export interface ReadingRow {
  series: number;
  time: number;
  value: number;
}

export const readingMapper = {
  /** A reading is named by its series and time, unique by the primary key. */
  toEntity(group: string, topic: string, row: ReadingRow): Reading {
    return {
      id: row.series.toString(16).padStart(10, '0') + (row.time + TIME_OFFSET).toString(16).padStart(14, '0'),
      group,
      topic,
      value: Number(row.value),
      time: new Date(row.time),
    };
  },
  /** As toEntity for rows `[time, value]` of one series: its part of the ids is made once. */
  entitiesOfSeries(
    group: string,
    topic: string,
    series: number,
    rows: readonly [number, number][],
  ): Reading[] {
    const prefix = series.toString(16).padStart(10, '0');
    return rows.map(([time, value]) => ({
      id: prefix + (time + TIME_OFFSET).toString(16).padStart(14, '0'),
      group,
      topic,
      value: Number(value),
      time: new Date(time),
    }));
  },
};

/** `AND ...` conditions of a range over `column` (time) and `value`, with their named parameters. */
export function rangeConditions(
  bounds: { from?: number; to?: number; minValue?: number; maxValue?: number },
  column = 'time',
): { sql: string; params: Record<string, number> } {
  const parts: string[] = [];
  const params: Record<string, number> = {};
  if (bounds.from !== undefined && Number.isFinite(bounds.from)) {
    parts.push(`${column} >= @from`);
    params['from'] = bounds.from;
  }
  if (bounds.to !== undefined && Number.isFinite(bounds.to)) {
    parts.push(`${column} < @to`);
    params['to'] = bounds.to;
  }
  if (bounds.minValue !== undefined) {
    parts.push('value >= @minValue');
    params['minValue'] = bounds.minValue;
  }
  if (bounds.maxValue !== undefined) {
    parts.push('value <= @maxValue');
    params['maxValue'] = bounds.maxValue;
  }
  return { sql: parts.map((part) => ` AND ${part}`).join(''), params };
}

/** The range's bounds as half-open milliseconds `[from, to)` plus the value filters. */
export function boundsOf(range: ReadingRange): {
  from?: number;
  to?: number;
  minValue?: number;
  maxValue?: number;
} {
  return {
    ...(range.startDate === undefined ? {} : { from: range.startDate.getTime() }),
    ...(range.endDate === undefined ? {} : { to: range.endDate.getTime() + 1 }),
    ...(range.minValue === undefined ? {} : { minValue: range.minValue }),
    ...(range.maxValue === undefined ? {} : { maxValue: range.maxValue }),
  };
}

/** Floor of `column` to a multiple of @bucket, right for negative times too (SQLite's % keeps the sign). */
export function bucketStart(column: string): string {
  return `${column} - ((${column} % @bucket) + @bucket) % @bucket`;
}
