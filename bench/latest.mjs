// The newest reading of each topic of a group on a MongoDB-wire server, with a long history: the group's
// latest record read by key (what latestdata/* asks the store now) against the queries asked before it
// existed (distinct topics, then a sorted findOne per topic), in the same run on the same data.
// With --http it also starts the real server (bench/server.mjs) on the same database and times
// `GET /api/data/latestdata/All` uncached: before each timed request a reading is written, so the route's
// tag has moved and the answer must be built from the store (a request whose ETag did not change was served
// from the cache and is not counted). Figures only; no test depends on them.
//
//   node bench/latest.mjs [readings=1000000] [uri] [--http]      (after a build)
// Without a uri: BENCH_MONGODB_URI or MONGODB_URI, else a FerretDB of its own from tools/ferretdb (SQLite, or
// PostgreSQL with BENCH_FERRETDB_BACKEND=postgresql).
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process';
import { Agent, get } from 'node:http';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';
import { benchMongoServer } from './ferretdb.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const fromAdapter = createRequire(join(root, 'packages/adapter-mongo/package.json'));
await import(pathToFileURL(fromAdapter.resolve('reflect-metadata')).href);
const { MongoStore } = await import(
  pathToFileURL(join(root, 'packages/adapter-mongo/dist/src/index.js')).href
);

const positional = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
const overHttp = process.argv.includes('--http');
const total = Number(positional[0] ?? 1_000_000);
/** The small group's history: the big one's answer is compared with it, in the same run. */
const SMALL = Math.min(total, 10_000);
const TOPICS = ['humidity', 'light', 'moisture/1', 'moisture/2', 'moisture/3', 'temperature'];
const BATCH = 10_000;
/** insertMany batches in flight at once: FerretDB-PostgreSQL takes them in about 20 % faster than one by one. */
const IN_FLIGHT = 4;
const log = (message) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function timed(runs, operation) {
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    await operation();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { runs, p50Ms: +percentile(times, 50).toFixed(2), p99Ms: +percentile(times, 99).toFixed(2) };
}

/**
 * `latestdata/All` through the real server, uncached: each timed request follows a write of one newer reading
 * to its group, so its tag is new and the answer is built from the store. The server's revision mirror sees
 * the write within MONGODB_REVISION_POLL_MS (250 ms), so it waits a little longer; a request whose ETag did not
 * change was answered from the cache and is dropped (counted as `stale`).
 */
async function routeUncached(uri, database, repository, newestAt) {
  const ROUNDS = Number(process.env.BENCH_LATEST_HTTP_ROUNDS ?? 100);
  const child = fork(fileURLToPath(new URL('server.mjs', import.meta.url)), ['hortus'], {
    env: { ...process.env, BENCH_MONGODB_URI: uri, BENCH_MONGODB_DB: database },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = await new Promise((resolve, reject) => {
    child.on('message', (message) => message.type === 'ready' && resolve(message));
    child.once('exit', (code) => reject(new Error(`the server exited with ${code} before it was ready`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const request = (path) =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      get(`${ready.url}${path}`, { agent, headers: { origin: 'http://localhost:3000' } }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            ms: performance.now() - started,
            status: response.statusCode,
            tag: response.headers.etag,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      }).on('error', reject);
    });
  try {
    const tags = new Map();
    const times = { big: [], small: [] };
    let stale = 0;
    let written = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, group] of [
        ['big', 'bench-big'],
        ['small', 'bench-small'],
      ]) {
        written += 1;
        const topic = TOPICS[round % TOPICS.length];
        await repository.add([
          { group, topic, value: 2000 + round, time: new Date(newestAt + 1000 * written) },
        ]);
        await delay(300);
        const answer = await request(`/api/data/latestdata/All?groupId=${group}`);
        if (answer.status !== 200)
          throw new Error(`latestdata/All answered ${answer.status}: ${answer.body}`);
        if (JSON.parse(answer.body).length !== TOPICS.length) throw new Error(`answered ${answer.body}`);
        if (answer.tag === tags.get(group)) stale += 1;
        else times[name].push(answer.ms);
        tags.set(group, answer.tag);
      }
    }
    const summary = (list) => {
      const sorted = [...list].sort((a, b) => a - b);
      return {
        runs: sorted.length,
        p50Ms: +percentile(sorted, 50).toFixed(2),
        p99Ms: +percentile(sorted, 99).toFixed(2),
      };
    };
    return { big: summary(times.big), small: summary(times.small), stale };
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
  }
}

const given = positional[1];
const server = given ? { uri: given, stop: async () => {} } : await benchMongoServer(root);
if (server === undefined)
  throw new Error('no MongoDB: give a uri, or build FerretDB (bash scripts/ferretdb.sh build)');
const dbName = `hortus_bench_latest_${Date.now().toString(36)}`;
const store = MongoStore.fromSettings({ uri: server.uri, dbName, operationTimeoutMS: 600_000 });
try {
  await store.start();
  const readings = store.db.collection('readings');
  const { ObjectId } = await import(pathToFileURL(fromAdapter.resolve('mongodb')).href);
  const t0 = Date.UTC(2025, 0, 1);
  const repository = store.repositories().readings;
  // The newest reading of each topic goes through Hortus (which keeps the latest record as it stores them);
  // the long history before it is copied in directly, which is quicker than ingesting it and changes no answer.
  const newestAt = t0 + total * 20_000;
  for (const group of ['bench-big', 'bench-small']) {
    await repository.add(
      TOPICS.map((topic, i) => ({ group, topic, value: 1000 + i, time: new Date(newestAt + i) })),
    );
  }
  const seedStart = performance.now();
  // The history of both groups, oldest first; several batches in flight (each one insertMany, unordered).
  const plan = [
    { group: 'bench-big', count: total },
    { group: 'bench-small', count: SMALL },
  ].flatMap(({ group, count }) =>
    Array.from({ length: Math.ceil(count / BATCH) }, (_, b) => ({
      group,
      from: b * BATCH,
      to: Math.min(count, (b + 1) * BATCH),
    })),
  );
  let next = 0;
  let seeded = 0;
  const seedOne = async () => {
    while (next < plan.length) {
      const { group, from, to } = plan[next];
      next += 1;
      const documents = [];
      for (let i = from; i < to; i += 1) {
        documents.push({
          _id: new ObjectId(),
          group,
          topic: TOPICS[i % TOPICS.length],
          value: i % 100,
          time: new Date(t0 + i * 20_000),
        });
      }
      await readings.insertMany(documents, { ordered: false });
      seeded += documents.length;
      if (Math.floor(seeded / 100_000) > Math.floor((seeded - documents.length) / 100_000))
        log(`seeded ${seeded} of ${total + SMALL}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, seedOne));
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const first = await repository.latestOfEveryTopic('bench-big');
  if (first.length !== TOPICS.length || first.some((reading) => reading.value < 1000)) {
    throw new Error(`answered ${JSON.stringify(first)}`);
  }
  const record = {
    big: await timed(300, () => repository.latestOfEveryTopic('bench-big')),
    small: await timed(300, () => repository.latestOfEveryTopic('bench-small')),
  };
  if (process.env.BENCH_LATEST_BEFORE !== 'off')
    log('the queries asked before the latest record (distinct + sorted findOne per topic)');
  const before = async (group) => {
    const topics = await readings.distinct('topic', { group });
    await Promise.all(topics.map((topic) => readings.findOne({ group, topic }, { sort: { time: -1 } })));
  };
  // On FerretDB these scan the whole collection, the small group's too: with a million readings, minutes
  // each (BENCH_LATEST_BEFORE=off skips them).
  const queries =
    process.env.BENCH_LATEST_BEFORE === 'off'
      ? 'skipped (BENCH_LATEST_BEFORE=off)'
      : {
          small: await timed(total > 100_000 ? 1 : 5, () => before('bench-small')),
          big: await timed(total > 100_000 ? 1 : 5, () => before('bench-big')),
        };
  const result = {
    server: server.kind ?? 'given',
    readings: { big: total, small: SMALL },
    topics: TOPICS.length,
    seedSeconds: +seedSeconds.toFixed(1),
    seedReadingsPerSecond: Math.round((total + SMALL) / seedSeconds),
    record,
    queriesBefore: queries,
    ...(overHttp ? { route: await routeUncached(server.uri, dbName, repository, newestAt) } : {}),
    loadAverage: loadavg().map((value) => +value.toFixed(2)),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await store.db.dropDatabase().catch(() => undefined);
  await store.close();
  await server.stop();
}
