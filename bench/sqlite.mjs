// The `sqlite` part of `pnpm bench` (the default store): newest readings with few and many readings, the
// file's size, history into buckets, ingest over HTTP, and polling against the memory store in the same run.
// `--only=sqlite-polling` runs its polling alone.
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { log, MB, median, round } from './harness.mjs';
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
import { notificationsRoute, pollingRoutes } from './polling.mjs';

/** Size of the database file with its write-ahead log, in MB. */
function fileMb(dataDir) {
  let bytes = 0;
  for (const name of ['hortus.db', 'hortus.db-wal']) {
    const file = join(dataDir, name);
    if (existsSync(file)) bytes += statSync(file).size;
  }
  return bytes / MB;
}

/**
 * The embedded store beside the memory store, in one run: newest readings with few and many readings, the
 * file size and resident memory with many, 30 days of history into ~500 buckets, HTTP ingest, and the
 * polling routes' throughput against the memory store's.
 */
export async function sqlitePart(bench) {
  const { startServer, get, latency, plan } = bench;
  const dirs = [];
  const dataDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hortus-bench-sqlite-'));
    dirs.push(dir);
    return dir;
  };
  try {
    const few = 1000;
    log(`SQLite: seeding ${few} and ${plan.manyReadings} readings`);
    const [smallDir, largeDir] = [await dataDir(), await dataDir()];
    const small = await startServer('hortus', { BENCH_DATA_DIR: smallDir, BENCH_SEED_READINGS: String(few) });
    const large = await startServer('hortus', {
      BENCH_DATA_DIR: largeDir,
      BENCH_SEED_READINGS: String(plan.manyReadings),
    });
    const path = '/api/data/latestdata/All?groupId=bench-latest';
    const answer = JSON.parse((await get(large.url, path)).body);
    if (answer.length !== 10)
      throw new Error(`latestdata/All answered ${answer.length} readings, expected 10`);
    const newestPath = '/api/data/latestdata/Temperature?groupId=bench-latest';
    for (const server of [small, large]) await latency(server.url, path, { seconds: plan.latencySeconds });
    const p50s = { few: [], many: [] };
    for (let r = 0; r < plan.latencyRounds; r += 1) {
      p50s.few.push((await latency(small.url, path, { seconds: plan.latencySeconds })).p50);
      p50s.many.push((await latency(large.url, path, { seconds: plan.latencySeconds })).p50);
    }
    const newest = await latency(large.url, newestPath, { seconds: plan.latencySeconds });
    const seeded = large.messages.find((message) => message.type === 'seeded');
    const rssMb = round(large.memory.after.rss / MB, 1);
    await Promise.all([small.stop(), large.stop()]);
    const megabytes = fileMb(largeDir);

    log(`SQLite: ${plan.historyDays} days of 20-second readings into buckets`);
    const historyServer = await startServer('hortus', {
      BENCH_DATA_DIR: await dataDir(),
      BENCH_HISTORY_DAYS: String(plan.historyDays),
    });
    const readings = Math.floor((plan.historyDays * DAY_MS) / STEP_MS);
    const history = await historyLatency(historyServer.url, readings, (query) =>
      latency(historyServer.url, query, { seconds: plan.historySeconds }),
    );
    log(`SQLite: ingest of ${plan.ingestBatches} batches of ${BATCH} over HTTP`);
    const ingested = await ingestRuns(bench, historyServer.url);
    await historyServer.stop();

    const polling = await sqlitePolling(bench, await dataDir());
    return {
      latest: {
        readingsFew: few,
        readingsMany: plan.manyReadings,
        p50MsFew: round(median(p50s.few), 3),
        p50MsMany: round(median(p50s.many), 3),
        ratio: round(median(p50s.many.map((value, i) => value / p50s.few[i]))),
        newestTemperatureP50Ms: round(newest.p50, 3),
      },
      file: {
        readings: plan.manyReadings,
        seedSeconds: round(seeded?.seconds ?? Number.NaN, 1),
        megabytes: round(megabytes, 1),
        megabytesPerMillion: round(megabytes / (plan.manyReadings / 1_000_000), 1),
        rssMb,
      },
      history: { readings, ...history },
      ingest: ingested,
      polling,
    };
  } finally {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Polling on SQLite against the memory store, same demo data, alternating round by round: every poll asks
 * the store for the group's revision, which SQLite keeps in the file. Also `--only=sqlite-polling` alone.
 * Each server's CPU per request is reported too: on a machine loaded by other work the request rates swing
 * with what the scheduler gives each server, the CPU a request costs much less.
 */
export async function sqlitePolling(bench, dataDirectory) {
  const { startServer, load, plan } = bench;
  log('SQLite: polling throughput against the memory store');
  const [sqlite, memory] = [
    await startServer('hortus', { BENCH_DATA_DIR: dataDirectory, BENCH_DEMO: 'on' }),
    await startServer('hortus', { BENCH_DEMO: 'on' }),
  ];
  const polling = {};
  for (const { route, path: routePath } of [...pollingRoutes, notificationsRoute]) {
    const rates = { sqlite: [], memory: [] };
    const cpus = { sqlite: [], memory: [] };
    // Warm both up first, then every round: one-second samples of two servers on two cores swing by
    // a fifth from round to round, so the ratio is the median of five same-round ratios.
    if (plan.warmupSeconds !== undefined) {
      await load(sqlite.url, routePath, plan.warmupSeconds);
      await load(memory.url, routePath, plan.warmupSeconds);
    }
    for (let r = 0; r < plan.rounds; r += 1) {
      for (const [name, server] of [
        ['sqlite', sqlite],
        ['memory', memory],
      ]) {
        const cpuBefore = await server.cpu();
        const result = await load(server.url, routePath, plan.seconds ?? 1);
        rates[name].push(result.rps);
        cpus[name].push(((await server.cpu()) - cpuBefore) / result.total);
      }
    }
    polling[route] = {
      sqliteRps: Math.round(median(rates.sqlite)),
      memoryRps: Math.round(median(rates.memory)),
      ratio: round(median(rates.sqlite.map((value, i) => value / rates.memory[i]))),
      sqliteCpuUs: round(median(cpus.sqlite), 1),
      memoryCpuUs: round(median(cpus.memory), 1),
      // Memory's CPU per request over SQLite's: as the rate ratio, 1 when SQLite costs nothing extra.
      cpuRatio: round(median(cpus.memory.map((value, i) => value / cpus.sqlite[i]))),
    };
  }
  await Promise.all([sqlite.stop(), memory.stop()]);
  return polling;
}

export function sqliteTargets(sqlite) {
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  if (sqlite !== undefined) {
    const { latest, polling, ingest: ingested } = sqlite;
    if (latest !== undefined)
      add(
        `latestdata/All p50, ${latest.readingsMany.toLocaleString('en')} vs ${latest.readingsFew} readings, SQLite`,
        '<= 1.3 x',
        `${latest.ratio} x (${latest.p50MsMany} ms vs ${latest.p50MsFew} ms)`,
        latest.ratio <= 1.3,
      );
    if (ingested !== undefined) {
      const best = bestIngest(ingested);
      add('Ingest over HTTP, SQLite', '>= 50,000 readings/s', ingestRate(best), best.perSecond >= 50_000);
    }
    for (const [route, figure] of Object.entries(polling)) {
      add(
        `Polling ${route}, SQLite vs memory store`,
        '>= 0.9 x',
        `${figure.ratio} x (${figure.sqliteRps.toLocaleString('en')} vs ${figure.memoryRps.toLocaleString('en')} req/s;` +
          ` CPU per request ${figure.sqliteCpuUs} vs ${figure.memoryCpuUs} us, ${figure.cpuRatio} x)`,
        figure.ratio >= 0.9,
      );
    }
    list.push(...historyTargets('SQLite', sqlite.history, 50));
  }
  return list;
}

export function sqliteMarkdown(sqlite) {
  const lines = [];
  if (sqlite?.file !== undefined) {
    const { file, latest } = sqlite;
    lines.push(
      '',
      `SQLite with ${file.readings.toLocaleString('en')} readings (seeded in ${file.seedSeconds} s): file ` +
        `${file.megabytes} MB (${file.megabytesPerMillion} MB per million readings), rss ${file.rssMb} MB; ` +
        `newest temperature p50 ${latest.newestTemperatureP50Ms} ms.`,
    );
  }
  if (sqlite?.ingest !== undefined)
    lines.push(
      ...ingestMarkdown(
        sqlite.ingest.map(
          (run) => `SQLite, ${run.concurrency} at a time: ${run.perSecond.toLocaleString('en')}/s`,
        ),
      ),
    );
  return lines;
}
