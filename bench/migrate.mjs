// Times `hortus migrate` on a source of N readings in the original's shape (text values), from one
// database of the MongoDB server at MONGODB_URI into another, and reports readings/s and peak memory.
//
//   pnpm build && eval "$(bash scripts/ferretdb.sh start)"
//   node bench/migrate.mjs [readings=1000000] [--into sqlite|mongodb] [--keep]
//
// The source is built first (not timed); the migration runs in a child process so its peak RSS is its own.
// Both databases are dropped at the end unless --keep is given.
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

if (process.argv[2] === '--child') {
  // The migration itself, in-process, so resourceUsage().maxRSS is the migration's alone.
  const { run } = await import(join(root, 'packages/cli/dist/src/index.js'));
  let report = '';
  const started = Date.now();
  const code = await run(['migrate', '--from', process.argv[3], '--json'], {
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
const into = process.argv.includes('--into') ? process.argv[process.argv.indexOf('--into') + 1] : 'mongodb';
const dataDir = into === 'sqlite' ? mkdtempSync(join(tmpdir(), 'hortus-bench-')) : undefined;
const suffix = randomBytes(3).toString('hex');
const sourceName = `bench_original_${suffix}`;
const targetName = `bench_hortus_${suffix}`;
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
const serverCpuBefore = serverCpuSeconds();
const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', withDb(sourceName)], {
  env:
    dataDir === undefined
      ? { ...process.env, MONGODB_URI: withDb(targetName), MONGODB_DB: targetName }
      : { ...process.env, MONGODB_URI: '', STORE: 'sqlite', HORTUS_DATA_DIR: dataDir },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (chunk) => (out += chunk));
await new Promise((resolve) => child.on('close', resolve));
const result = JSON.parse(out);
const serverCpuAfter = serverCpuSeconds();
const datas = result.report.collections.find((c) => c.collection === 'datas');
const stored =
  dataDir === undefined
    ? await client.db(targetName).collection('readings').estimatedDocumentCount()
    : datas.written;
console.log(
  JSON.stringify(
    {
      readings: total,
      into,
      exitCode: result.code,
      seconds: result.seconds,
      readingsPerSecond: Math.round(total / result.seconds),
      peakRssMb: result.maxRssMb,
      migrateCpuSeconds: result.cpuSeconds,
      ...(serverCpuBefore === undefined || serverCpuAfter === undefined
        ? {}
        : { databaseServerCpuSeconds: Math.round((serverCpuAfter - serverCpuBefore) * 10) / 10 }),
      read: datas.read,
      written: datas.written,
      storedInTarget: stored,
    },
    null,
    2,
  ),
);
if (dataDir !== undefined && !keep) rmSync(dataDir, { recursive: true, force: true });
if (!keep) {
  await client.db(sourceName).dropDatabase();
  await client.db(targetName).dropDatabase();
}
await client.close();
