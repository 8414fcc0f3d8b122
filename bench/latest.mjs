// The newest reading of each topic of a group on a MongoDB-wire server, with a long history: the group's
// latest record read by key (what latestdata/* asks the store now) against the queries asked before it
// existed (distinct topics, then a sorted findOne per topic), in the same run on the same data.
// Figures only; no test depends on them.
//
//   node bench/latest.mjs [readings=1000000] [uri]      (after a build)
// Without a uri: BENCH_MONGODB_URI or MONGODB_URI, else a FerretDB of its own from tools/ferretdb (SQLite, or
// PostgreSQL with BENCH_FERRETDB_BACKEND=postgresql).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';
import { benchMongoServer } from './ferretdb.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const fromAdapter = createRequire(join(root, 'packages/adapter-mongo/package.json'));
await import(pathToFileURL(fromAdapter.resolve('reflect-metadata')).href);
const { MongoStore } = await import(
  pathToFileURL(join(root, 'packages/adapter-mongo/dist/src/index.js')).href
);

const total = Number(process.argv[2] ?? 1_000_000);
const TOPICS = ['humidity', 'light', 'moisture/1', 'moisture/2', 'moisture/3', 'temperature'];
const BATCH = 10_000;
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

const given = process.argv[3];
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
  for (let done = 0; done < total; done += BATCH) {
    const documents = [];
    for (let i = done; i < Math.min(total, done + BATCH); i += 1) {
      const topic = TOPICS[i % TOPICS.length];
      documents.push({
        _id: new ObjectId(),
        group: 'bench-big',
        topic,
        value: i % 100,
        time: new Date(t0 + i * 20_000),
      });
    }
    await readings.insertMany(documents, { ordered: false });
    if ((done / BATCH) % 10 === 0) log(`seeded ${done + documents.length} of ${total}`);
  }
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const first = await repository.latestOfEveryTopic('bench-big');
  if (first.length !== TOPICS.length || first.some((reading) => reading.value < 1000)) {
    throw new Error(`answered ${JSON.stringify(first)}`);
  }
  const record = {
    big: await timed(300, () => repository.latestOfEveryTopic('bench-big')),
    small: await timed(300, () => repository.latestOfEveryTopic('bench-small')),
  };
  log('the queries asked before the latest record (distinct + sorted findOne per topic)');
  const before = async (group) => {
    const topics = await readings.distinct('topic', { group });
    await Promise.all(topics.map((topic) => readings.findOne({ group, topic }, { sort: { time: -1 } })));
  };
  // On FerretDB-SQLite these scan the collection: with a million readings, minutes (BENCH_LATEST_BEFORE=off skips it).
  const queries = {
    small: await timed(20, () => before('bench-small')),
    ...(process.env.BENCH_LATEST_BEFORE === 'off'
      ? {}
      : { big: await timed(total > 100_000 ? 1 : 5, () => before('bench-big')) }),
  };
  const result = {
    readings: total,
    topics: TOPICS.length,
    seedSeconds: +seedSeconds.toFixed(1),
    record,
    queriesBefore: queries,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await store.db.dropDatabase().catch(() => undefined);
  await store.close();
  await server.stop();
}
