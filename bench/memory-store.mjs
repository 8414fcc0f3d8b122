// The `memory` part of `pnpm bench`: history into buckets and ingest over HTTP on the memory store.
import { log } from './harness.mjs';
import {
  BATCH,
  DAY_MS,
  STEP_MS,
  bestIngest,
  historyLatency,
  historyTargets,
  ingestMarkdown,
  ingestRate,
  ingestRuns,
} from './history.mjs';

export async function memoryPart(bench) {
  const { startServer, latency, plan } = bench;
  log(`history on the memory store: ${plan.historyDays} days of 20-second readings`);
  const server = await startServer('hortus', { BENCH_HISTORY_DAYS: String(plan.historyDays) });
  const readings = Math.floor((plan.historyDays * DAY_MS) / STEP_MS);
  const history = await historyLatency(server.url, readings, (path) =>
    latency(server.url, path, { seconds: plan.historySeconds }),
  );
  log(`ingest into the memory store: ${plan.ingestBatches} batches of ${BATCH}`);
  const runs = await ingestRuns(bench, server.url);
  await server.stop();
  return { history: { readings, ...history }, ingest: runs };
}

export function memoryTargets(memoryStore) {
  if (memoryStore === undefined) return [];
  const best = bestIngest(memoryStore.ingest);
  return [
    ...historyTargets('memory store', memoryStore.history, 50),
    {
      name: 'Ingest over HTTP, memory store',
      goal: '>= 50,000 readings/s',
      measured: ingestRate(best),
      met: best.perSecond >= 50_000,
    },
  ];
}

export function memoryMarkdown(memoryStore) {
  if (memoryStore === undefined) return [];
  return ingestMarkdown(
    memoryStore.ingest.map(
      (run) => `memory store, ${run.concurrency} at a time: ${run.perSecond.toLocaleString('en')}/s`,
    ),
  );
}
