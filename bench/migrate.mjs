// Times `hortus migrate` on a source of N readings in the original's shape (text values), from one
// database of the MongoDB server at MONGODB_URI into another, and reports readings/s and peak memory.
//
//   pnpm build && eval "$(bash scripts/ferretdb.sh start)"
//   node bench/migrate.mjs [readings=1000000] [--into sqlite,memory,mongodb] [--keep]
//
// The source is built once (not timed). First a plain driver read of it (every document, in batches, nothing
// converted or written) gives the floor; then one migration per store named in --into (default mongodb),
// each into a fresh target. Every run is a child process, so its peak RSS is its own; the ratio to the
// plain read is what Hortus itself costs. Both databases are dropped at the end unless --keep is given.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'packages/cli/package.json'));
const { MongoClient, ObjectId } = require('mongodb');

if (process.argv[2] === '--plain') {
  // The floor: the same source read with the driver alone, as the migration reads it.
  const client = new MongoClient(process.argv[3]);
  await client.connect();
  const started = Date.now();
  let read = 0;
  const cursor = client.db().collection('datas').find({}, { batchSize: 5000 });
  for await (const document of cursor) if (document) read += 1;
  const seconds = (Date.now() - started) / 1000;
  await client.close();
  process.stdout.write(
    `${JSON.stringify({
      code: 0,
      seconds,
      maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      cpuSeconds: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1e4) / 100,
      read,
    })}\n`,
  );
  process.exit(0);
}

if (process.argv[2] === '--child') {
  // The migration itself, in-process, so resourceUsage().maxRSS is the migration's alone.
  const { run } = await import(join(root, 'packages/cli/dist/src/index.js'));
  // The CLI migrates only into a store that outlives it; the memory store is measured through a container.
  let container;
  if (process.env.BENCH_STORE === 'memory') {
    const { Container } = createRequire(join(root, 'packages/cli/package.json'))('inversify');
    const { createCoreModule, defaultCoreSettings } = await import(
      join(root, 'packages/core/dist/src/index.js')
    );
    const { memoryStoreModule } = await import(join(root, 'packages/adapter-memory/dist/src/index.js'));
    container = new Container();
    container.load(createCoreModule(defaultCoreSettings), memoryStoreModule());
  }
  let report = '';
  const started = Date.now();
  const code = await run(['migrate', '--from', process.argv[3], '--json'], {
    ...(container === undefined ? {} : { container }),
    stdout: { write: (chunk) => (report += chunk) },
    stderr: process.stderr,
    env: process.env,
  });
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(
    `${JSON.stringify({
      code,
      seconds,
      maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      cpuSeconds: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1e4) / 100,
      report: JSON.parse(report),
    })}\n`,
  );
  process.exit(0);
}

const uri = process.env.MONGODB_URI;
if (!uri) {
  console.error('MONGODB_URI is not set: eval "$(bash scripts/ferretdb.sh start)" first');
  process.exit(2);
}
const total = Number(process.argv[2] ?? 1_000_000);
const keep = process.argv.includes('--keep');
const stores = (
  process.argv.includes('--into') ? process.argv[process.argv.indexOf('--into') + 1] : 'mongodb'
).split(',');
const suffix = randomBytes(3).toString('hex');
const sourceName = `bench_original_${suffix}`;
const withDb = (name) => {
  const url = new URL(uri);
  url.pathname = `/${name}`;
  return url.toString();
};

const client = new MongoClient(uri);
await client.connect();
const source = client.db(sourceName);
const topics = [
  'esp/air/temperature',
  'esp/air/humidity',
  'esp/ground/light/lux',
  'esp/ground/moisture/1',
  'esp/ground/moisture/2',
];
const groups = ['gh-1', 'gh-2', 'gh-3', 'gh-4'];
const start = Date.UTC(2023, 0, 1);
console.error(`building the source: ${total} readings in ${sourceName} ...`);
let built = Date.now();
await source
  .collection('groups')
  .insertMany(groups.map((name) => ({ name, package: 'small', employee: '', settings: [] })));
const BATCH = 10_000;
for (let i = 0; i < total; i += BATCH) {
  const docs = [];
  for (let k = i; k < Math.min(total, i + BATCH); k += 1) {
    // Every group's every topic gets a reading every 10 s, in time order, as boxes wrote them.
    const series = k % (groups.length * topics.length);
    docs.push({
      _id: new ObjectId(),
      time: new Date(start + Math.floor(k / (groups.length * topics.length)) * 10_000),
      topic: topics[series % topics.length],
      value: (((k * 7) % 400) / 10).toFixed(1),
      group: groups[Math.floor(series / topics.length)],
      __v: 0,
    });
  }
  await source.collection('datas').insertMany(docs, { ordered: false });
}
console.error(`source built in ${((Date.now() - built) / 1000).toFixed(1)} s; migrating ...`);

// The test server's CPU time, when it is the one scripts/ferretdb.sh started: where the time goes.
const serverCpuSeconds = () => {
  try {
    const pid = readFileSync(join(root, '.ferretdb/pid'), 'utf8').trim();
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
};
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Runs this script as a child in `mode`, answering its JSON line and the database server's CPU seconds. */
async function child(mode, env) {
  const before = serverCpuSeconds();
  const load = loadAverage();
  const process_ = spawn(process.execPath, [fileURLToPath(import.meta.url), mode, withDb(sourceName)], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  process_.stdout.on('data', (chunk) => (out += chunk));
  await new Promise((resolve) => process_.on('close', resolve));
  const after = serverCpuSeconds();
  return {
    ...JSON.parse(out),
    loadAverageAtStart: load,
    loadAverageAtEnd: loadAverage(),
    ...(before === undefined || after === undefined
      ? {}
      : { databaseServerCpuSeconds: Math.round((after - before) * 10) / 10 }),
  };
}

const plain = await child('--plain', process.env);
console.log(
  JSON.stringify({
    run: 'plain driver read',
    readings: plain.read,
    seconds: plain.seconds,
    readingsPerSecond: Math.round(plain.read / plain.seconds),
    peakRssMb: plain.maxRssMb,
    cpuSeconds: plain.cpuSeconds,
    databaseServerCpuSeconds: plain.databaseServerCpuSeconds,
    loadAverage: `${plain.loadAverageAtStart} -> ${plain.loadAverageAtEnd}`,
  }),
);
for (const into of stores) {
  const targetName = `bench_hortus_${suffix}_${into}`;
  const dataDir = into === 'sqlite' ? mkdtempSync(join(tmpdir(), 'hortus-bench-')) : undefined;
  const env =
    into === 'mongodb'
      ? { ...process.env, MONGODB_URI: withDb(targetName), MONGODB_DB: targetName }
      : into === 'sqlite'
        ? { ...process.env, MONGODB_URI: '', STORE: 'sqlite', HORTUS_DATA_DIR: dataDir }
        : { ...process.env, MONGODB_URI: '', BENCH_STORE: 'memory' };
  const result = await child('--child', env);
  const datas = result.report.collections.find((c) => c.collection === 'datas');
  const perSecond = Math.round(total / result.seconds);
  console.log(
    JSON.stringify({
      run: `migrate into ${into}`,
      readings: total,
      exitCode: result.code,
      seconds: result.seconds,
      readingsPerSecond: perSecond,
      timesThePlainRead: Math.round((result.seconds / plain.seconds) * 10) / 10,
      peakRssMb: result.maxRssMb,
      migrateCpuSeconds: result.cpuSeconds,
      cpuTimesThePlainRead: Math.round((result.cpuSeconds / plain.cpuSeconds) * 10) / 10,
      databaseServerCpuSeconds: result.databaseServerCpuSeconds,
      loadAverage: `${result.loadAverageAtStart} -> ${result.loadAverageAtEnd}`,
      read: datas.read,
      written: datas.written,
      ...(into === 'mongodb'
        ? { storedInTarget: await client.db(targetName).collection('readings').estimatedDocumentCount() }
        : {}),
    }),
  );
  if (dataDir !== undefined && !keep) rmSync(dataDir, { recursive: true, force: true });
  if (!keep) await client.db(targetName).dropDatabase();
}
if (!keep) await client.db(sourceName).dropDatabase();
await client.close();
