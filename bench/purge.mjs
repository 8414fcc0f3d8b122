// Polling latency while retention purges old readings on the SQLite store: p50/p99 of the polled routes
// with the server idle, then while ApplyRetention deletes N readings in its batches (as RetentionJob runs
// it in the server's own process), the purge's rate, and the data file's size before and after the purge
// (incremental vacuum gives the freed pages back batch by batch). Figures only, printed on stdout.
//
//   pnpm build && node bench/purge.mjs [readings=1500000] [pollers=10]
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL, URL } from 'node:url';

const hortus = (pkg) => import(new URL(`../packages/${pkg}/dist/src/index.js`, import.meta.url).href);
const DAY_MS = 86_400_000;
/** The data file and its write-ahead log, in bytes. */
const fileBytes = (file) =>
  ['', '-wal'].reduce(
    (sum, suffix) => sum + (existsSync(file + suffix) ? statSync(file + suffix).size : 0),
    0,
  );

if (process.argv[2] === '--server') {
  // The server under test, with the old readings seeded straight into the store and a purge on request.
  const fromCli = createRequire(new URL('../packages/cli/package.json', import.meta.url));
  await import(pathToFileURL(fromCli.resolve('reflect-metadata')).href);
  const { createContainer, createJsonLogger, loadConfig, startServer, RetentionJob } = await hortus('cli');
  const { ApplyRetention, READING_REPOSITORY, STORE_LIFECYCLE } = await hortus('core');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    STORE: 'sqlite',
    HORTUS_DATA_DIR: process.env.BENCH_DATA_DIR,
    RATE_LIMIT_PER_MINUTE: '1000000',
    AUTOMATIONS: 'off',
    RETENTION_DAYS: '30',
  });
  const logger = createJsonLogger(() => {});
  const container = await createContainer(config, { logger });
  await container.get(STORE_LIFECYCLE).start();
  const readings = container.get(READING_REPOSITORY);
  const total = Number(process.env.BENCH_READINGS);
  const topics = ['esp/air/temperature', 'esp/air/humidity', 'esp/ground/light/lux', 'esp/ground/moisture/1'];
  const perTopic = Math.ceil(total / topics.length);
  // Every 20 s for as long as it takes, ending 31 days ago (all expire), plus today's readings that stay.
  const end = Date.now() - 31 * DAY_MS;
  const seedStart = performance.now();
  for (const topic of topics) {
    for (let first = 0; first < perTopic; first += 50_000) {
      const batch = [];
      for (let i = first; i < Math.min(perTopic, first + 50_000); i += 1) {
        batch.push({ group: 'bench', topic, value: 20 + (i % 50) / 10, time: new Date(end - i * 20_000) });
      }
      await readings.add(batch);
    }
    await readings.add([{ group: 'bench', topic, value: 21, time: new Date() }]);
  }
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const store = container.get(STORE_LIFECYCLE);
  const file = join(process.env.BENCH_DATA_DIR, 'hortus.db');
  // Sizes are taken with the log folded in, so they are the file's own.
  const checkpointed = () => (store.database.pragma('wal_checkpoint(TRUNCATE)'), fileBytes(file));
  const seededBytes = checkpointed();
  const running = await startServer(config, { container, logger, retentionFirstRunMs: DAY_MS });
  const job = new RetentionJob(container.get(ApplyRetention), {
    ...logger,
    info: (event, fields) => process.send({ type: 'log', event, fields }),
  });
  process.on('message', async (message) => {
    if (message === 'purge') {
      const started = performance.now();
      await job.runOnce();
      const seconds = (performance.now() - started) / 1000;
      process.send({ type: 'purged', seconds, bytes: fileBytes(file), checkpointedBytes: checkpointed() });
    } else if (message === 'stop') {
      await running.close();
      process.exit(0);
    }
  });
  process.send({
    type: 'ready',
    url: running.url,
    seeded: perTopic * topics.length,
    seedSeconds,
    seededBytes,
  });
} else {
  const total = Number(process.argv[2] ?? 1_500_000);
  const pollers = Number(process.argv[3] ?? 10);
  const dataDir = mkdtempSync(join(tmpdir(), 'hortus-purge-'));
  const child = fork(new URL(import.meta.url).pathname, ['--server'], {
    env: { ...process.env, BENCH_DATA_DIR: dataDir, BENCH_READINGS: String(total) },
  });
  const next = (type) =>
    new Promise((resolve) => {
      const listener = (message) => {
        if (message.type === 'log') {
          if (message.event === 'retention purge') purgeLog = message.fields;
          return;
        }
        if (message.type !== type) return;
        child.off('message', listener);
        resolve(message);
      };
      child.on('message', listener);
    });
  let purgeLog;
  const ready = await next('ready');
  process.stderr.write(`seeded ${ready.seeded} readings in ${ready.seedSeconds.toFixed(1)} s\n`);
  const agent = new Agent({ keepAlive: true, maxSockets: pollers });
  const paths = [
    '/api/data/latestdata/All?groupId=bench',
    '/api/data/All/temperature?groupId=bench&count=100',
  ];
  const get = (path) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      request(`${ready.url}${path}`, { agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(performance.now() - started));
      })
        .on('error', reject)
        .end();
    });
  /** Polls with `pollers` loops until `until` resolves (or for `ms`); answers the sorted latencies. */
  async function poll(until) {
    const latencies = [];
    let done = false;
    void until.then(() => (done = true));
    await Promise.all(
      Array.from({ length: pollers }, async (_, index) => {
        for (let n = index; !done; n += 1) latencies.push(await get(paths[n % paths.length]));
      }),
    );
    return latencies.sort((a, b) => a - b);
  }
  const stats = (sorted) => {
    const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1);
    return `n=${sorted.length} p50=${at(50)} ms p99=${at(99)} ms max=${sorted.at(-1).toFixed(1)} ms`;
  };
  await poll(delay(1000)); // warm-up
  const idle = await poll(delay(5000));
  child.send('purge');
  const purged = next('purged');
  const during = await poll(purged);
  const { seconds, bytes, checkpointedBytes } = await purged;
  child.send('stop');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
  const deleted = purgeLog?.deleted ?? 0;
  console.log(
    `purge on SQLite: ${deleted} readings in ${seconds.toFixed(1)} s (${Math.round(deleted / seconds)} readings/s), ${pollers} pollers`,
  );
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(
    `data file: ${mb(ready.seededBytes)} seeded, ${mb(bytes)} right after the purge (file + log), ${mb(checkpointedBytes)} after a checkpoint (summaries kept)`,
  );
  console.log(`polling idle:         ${stats(idle)}`);
  console.log(`polling during purge: ${stats(during)}`);
}
