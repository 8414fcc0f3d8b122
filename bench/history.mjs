// What the store parts (memory, SQLite, MongoDB) share: 30 days of 20-second readings summarised into
// about 500 buckets, and batches of readings ingested over HTTP.
import { performance } from 'node:perf_hooks';
import { latency, post, round } from './harness.mjs';

export const BATCH = 5000;
export const STEP_MS = 20_000;
export const DAY_MS = 86_400_000;

export /** 30 days into about 500 buckets: `points=500` (the round size that fits: 2 h) and `interval=87m` (497). */
const historyQueries = [
  { name: 'points=500', query: 'points=500' },
  { name: 'interval=87m', query: 'interval=87m' },
];

export async function historyLatency(url, readings, measure) {
  const results = {};
  for (const { name, query } of historyQueries) {
    const path = `/api/data/All/temperature?groupId=bench-history&${query}`;
    await latency(url, path, { count: 2 });
    const measured = await measure(path);
    const buckets = JSON.parse(measured.last.body);
    const counted = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
    // The default window starts at a bucket boundary near 30 days ago, so the oldest few may fall outside.
    if (counted > readings || counted < 0.99 * readings) {
      throw new Error(`${name}: buckets count ${counted} readings, ${readings} were stored`);
    }
    results[name] = {
      p50Ms: round(measured.p50, 2),
      p90Ms: round(measured.p90, 2),
      n: measured.n,
      buckets: buckets.length,
    };
  }
  return results;
}

export function readingBatches(group, days, endMs) {
  const total = Math.floor((days * DAY_MS) / STEP_MS);
  const bodies = [];
  for (let first = 0; first < total; first += BATCH) {
    const batch = [];
    for (let i = first; i < Math.min(total, first + BATCH); i += 1) {
      const time = new Date(endMs - (total - 1 - i) * STEP_MS).toISOString();
      batch.push({ group, topic: 'esp/air/temperature', value: round(20 + 5 * Math.sin(i / 300), 2), time });
    }
    bodies.push(JSON.stringify(batch));
  }
  return { total, bodies };
}

/** Posts the batches, `concurrency` at a time; readings stored per second of wall time. */
export async function ingest(url, bodies, concurrency) {
  let next = 0;
  let stored = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next];
      next += 1;
      const reply = await post(url, '/api/data/readings', body);
      if (reply.status !== 202)
        throw new Error(`ingest answered ${reply.status}: ${reply.body.slice(0, 200)}`);
      stored += JSON.parse(reply.body).stored;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    readings: stored,
    seconds: round(seconds, 2),
    perSecond: Math.round(stored / seconds),
    concurrency,
  };
}

export function bestIngest(runs) {
  return runs.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
}

export function ingestRate({ perSecond, concurrency }) {
  return `${perSecond.toLocaleString('en')}/s (${concurrency} batch${concurrency > 1 ? 'es' : ''} at a time)`;
}

/**
 * Ingest one batch at a time, then two (boxes send on their own; the server parses the next batch while the
 * client still reads the last answer), after a warm-up. Four groups each get their batches in time order,
 * as boxes send them; every run stores new readings.
 */
export async function ingestRuns({ plan }, url) {
  const bodies = [];
  const span = BATCH * STEP_MS;
  const first = Date.now() - plan.ingestBatches * span;
  for (let b = 0; b < plan.ingestBatches; b += 1) {
    const {
      bodies: [body],
    } = readingBatches(`bench-ingest-${b % 4}`, span / DAY_MS, first + (b + 1) * span);
    bodies.push(body);
  }
  await ingest(url, bodies.slice(0, 2), 1);
  const fresh = (suffix) => bodies.map((body) => body.replaceAll('bench-ingest-', `bench-ingest-${suffix}-`));
  return [await ingest(url, fresh('a'), 1), await ingest(url, fresh('b'), 2)];
}

/** The history goals of one store: each query's p50 under the store's limit. */
export function historyTargets(store, history, limitMs) {
  if (history === undefined) return [];
  return historyQueries.map(({ name }) => {
    const figure = history[name];
    return {
      name: `History of ${history.readings.toLocaleString('en')} readings, ${name} (${figure.buckets} buckets), ${store}`,
      goal: `p50 < ${limitMs} ms`,
      measured: `${figure.p50Ms} ms`,
      met: figure.p50Ms < limitMs,
    };
  });
}

/** The report's line of one store's ingest runs. */
export function ingestMarkdown(runs) {
  return ['', `Ingest (batches of ${BATCH} readings over HTTP): ${runs.join('; ')}.`];
}
