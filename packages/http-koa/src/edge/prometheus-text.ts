/** Pieces of the Prometheus text format (0.0.4) the metrics share. */

/** Upper bounds (seconds) of the latency buckets: from a cached poll to a slow store. */
export const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export interface Histogram {
  readonly counts: number[];
  sum: number;
  count: number;
}

export function newHistogram(): Histogram {
  return { counts: latencyBuckets.map(() => 0), sum: 0, count: 0 };
}

export function observe(histogram: Histogram, seconds: number): void {
  const { counts } = histogram;
  for (let index = 0; index < latencyBuckets.length; index += 1) {
    if (seconds <= (latencyBuckets[index] ?? 0)) counts[index] = (counts[index] ?? 0) + 1;
  }
  histogram.sum += seconds;
  histogram.count += 1;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/gu, '\\\\').replace(/"/gu, '\\"').replace(/\n/gu, '\\n');
}

export function labels(pairs: Readonly<Record<string, string>>): string {
  const text = Object.entries(pairs)
    .map(([name, value]) => `${name}="${escapeLabel(value)}"`)
    .join(',');
  return text === '' ? '' : `{${text}}`;
}

/** The `_bucket`, `_sum` and `_count` lines of one histogram series. */
export function histogramLines(
  name: string,
  pairs: Readonly<Record<string, string>>,
  histogram: Histogram,
): string[] {
  const lines = latencyBuckets.map(
    (bound, index) =>
      `${name}_bucket${labels({ ...pairs, le: String(bound) })} ${histogram.counts[index] ?? 0}`,
  );
  lines.push(`${name}_bucket${labels({ ...pairs, le: '+Inf' })} ${histogram.count}`);
  lines.push(`${name}_sum${labels(pairs)} ${histogram.sum}`);
  lines.push(`${name}_count${labels(pairs)} ${histogram.count}`);
  return lines;
}

/** The HELP and TYPE lines of a metric. */
export function header(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
}
