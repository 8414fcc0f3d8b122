// `pnpm bench`: starts its own servers, warms up, measures, and writes bench/results/latest.{json,md}.
// `pnpm bench:smoke` runs every case for a moment (CI: so the benchmark cannot rot) and writes to a temp dir.
// Figures only: nothing here is a timed test, and no figure is written that was not measured in this run.
import autocannon from 'autocannon';
import { Buffer } from 'node:buffer';
import { execFile, execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { delimiter, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { cliMarkdown, cliStart, cliTargets } from './cli.mjs';
import { boxesMarkdown, boxesPart, boxesTargets } from './boxes.mjs';
import { engineMarkdown, enginePart, engineTargets } from './engine.mjs';
import { benchMongoBackends, benchMongoServer } from './ferretdb.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const smoke = process.argv.includes('--smoke');
/** `--only=polling,scale,memory,mongo` runs some parts (while working on one); the report then lists only those. */
const onlyArgument = process.argv.find((argument) => argument.startsWith('--only='));
const parts = new Set(
  (
    onlyArgument?.slice('--only='.length) ??
    'polling,scale,memory,sqlite,mongo,logins,capacity,boxes,engine,cli'
  ).split(','),
);

/** Seconds and counts of each part; the smoke run keeps every part but makes it tiny. */
const plan = smoke
  ? {
      rounds: 1,
      // autocannon runs whole seconds; a count of requests keeps the smoke run short.
      requests: 400,
      connections: 10,
      latencyRounds: 1,
      latencySeconds: 0.3,
      manyReadings: 100_000,
      historyDays: 2,
      historySeconds: 0.3,
      ingestBatches: 4,
      mongoDays: 1,
      mongoQueries: 3,
      mongoPollingRounds: 1,
      logins: 2,
      loginPollSeconds: 0.5,
      // One small step per store, on a tenth of the period: the code path, not a figure.
      capacitySteps: [30],
      mongoCapacitySteps: [30],
      capacityPeriodMs: 400,
    }
  : {
      rounds: 5,
      seconds: 2,
      warmupSeconds: 1,
      connections: 10,
      latencyRounds: 5,
      latencySeconds: 2,
      manyReadings: 10_000_000,
      historyDays: 30,
      historySeconds: 3,
      ingestBatches: 60,
      mongoDays: 30,
      mongoQueries: 25,
      mongoPollingRounds: 3,
      logins: 10,
      loginPollSeconds: 5,
      // BENCH_CAPACITY_STEPS=5000,10000 replaces them (while working on the polling path).
      capacitySteps: process.env.BENCH_CAPACITY_STEPS?.split(',').map(Number) ?? [
        1000, 2500, 5000, 7500, 10_000, 12_500, 15_000,
      ],
      // The test MongoDB (FerretDB) takes about 0.6 s per box post: it starts lower.
      mongoCapacitySteps: process.env.BENCH_CAPACITY_STEPS?.split(',').map(Number) ?? [
        250, 500, 1000, 2500, 5000, 7500,
      ],
      capacityPeriodMs: 5000,
    };

const ORIGIN = 'http://localhost:3000';
const MB = 1024 * 1024;
const BATCH = 5000;
const STEP_MS = 20_000;
const DAY_MS = 86_400_000;

const log = (line) => process.stderr.write(`${line}\n`);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const signed = (value) => (value < 0 ? `${value}` : `+${value}`);

const children = new Set();

/** The first executable of that name on PATH, or undefined. */
function onPath(name) {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory !== '' && existsSync(join(directory, name))) return join(directory, name);
  }
  return undefined;
}

/**
 * wrk (C, one thread) drives the polling cases when it is installed: autocannon, in JavaScript, needs
 * about as much CPU per request as the hello servers it measures, so on a small machine it, not they,
 * set their figures. BENCH_GENERATOR=autocannon forces the fallback.
 */
const wrkPath = process.env.BENCH_GENERATOR === 'autocannon' ? undefined : onPath('wrk');
/**
 * With taskset, each server is pinned to core 0 and wrk to core 1 (on a machine with two or more cores), so
 * the two never queue behind each other on one core: every case gets the same single core, which is what
 * the ratios compare. BENCH_PIN=off turns it off.
 */
const tasksetPath = process.env.BENCH_PIN === 'off' || cpus().length < 2 ? undefined : onPath('taskset');
const pinning = wrkPath !== undefined && tasksetPath !== undefined;

/** Forks bench/server.mjs; resolves once it listens. Its stdout (the request log) goes to /dev/null. */
function startServer(kind, env = {}, { pin = true } = {}) {
  const child = fork(fileURLToPath(new URL('server.mjs', import.meta.url)), [kind], {
    // BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the servers under test.
    execArgv: ['--expose-gc', ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.add(child);
  // Every thread of the server (libuv pool and GC too) on core 0; wrk runs on core 1.
  if (pinning && pin) execFileSync(tasksetPath, ['-a', '-cp', '0', String(child.pid)], { stdio: 'ignore' });
  const messages = [];
  const cpuWaiters = [];
  child.on('message', (message) => {
    messages.push(message);
    if (message.type === 'cpu') cpuWaiters.shift()?.(message.micros);
  });
  /** CPU microseconds the server has used so far. */
  const cpu = () =>
    new Promise((resolve) => {
      cpuWaiters.push(resolve);
      child.send({ type: 'cpu' });
    });
  return new Promise((resolve, reject) => {
    child.on('message', (message) => {
      if (message.type === 'ready')
        resolve({ ...message, child, messages, cpu, stop: () => stopChild(child) });
    });
    child.once('exit', (code) => reject(new Error(`server ${kind} exited with ${code} before it was ready`)));
  });
}

async function stopChild(child) {
  // A child ended by a signal keeps exitCode null: it is gone all the same, and will not exit again.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  children.delete(child);
}

/** wrk's figures: `N requests in 2.00s`, `Non-2xx or 3xx responses: N` (4xx and 5xx), socket errors. */
function parseWrk(text) {
  const totals = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/u.exec(text);
  const rate = /Requests\/sec:\s+([\d.]+)/u.exec(text);
  if (totals === null || rate === null) throw new Error(`unexpected wrk output:\n${text}`);
  const failed = Number(/Non-2xx or 3xx responses:\s+(\d+)/u.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/u.exec(text);
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0);
  return { rps: Number(rate[1]), total: Number(totals[1]), failed, errors: socketErrors };
}

/**
 * One wrk run (one thread, the same connections as autocannon). wrk counts 4xx/5xx but not which 2xx/3xx:
 * the cases that must be 304 are checked on the server's own request counters (see pollingThroughput).
 */
function loadWithWrk(url, path, seconds, headers) {
  const args = ['-t1', `-c${plan.connections}`, `-d${seconds}s`, '--latency'];
  for (const [name, value] of Object.entries({ origin: ORIGIN, ...headers }))
    args.push('-H', `${name}: ${value}`);
  args.push(`${url}${path}`);
  const [command, commandArgs] = pinning ? [tasksetPath, ['-c', '1', wrkPath, ...args]] : [wrkPath, args];
  return new Promise((resolve, reject) => {
    execFile(command, commandArgs, { timeout: (seconds + 30) * 1000 }, (error, stdout) => {
      if (error) return reject(error);
      const { rps, total, failed, errors } = parseWrk(stdout);
      return resolve({ rps, total, statuses: { ok: total - failed, failed }, errors, generator: 'wrk' });
    });
  });
}

/** One load run: wrk for whole seconds when installed (not in the smoke run), else autocannon. */
function load(url, path, seconds, headers = {}) {
  if (wrkPath !== undefined && plan.requests === undefined) return loadWithWrk(url, path, seconds, headers);
  return loadWithAutocannon(url, path, seconds, headers);
}

/** One autocannon run, for whole seconds (or, in the smoke run, a number of requests); req/s from the total. */
async function loadWithAutocannon(url, path, seconds, headers = {}) {
  const result = await autocannon({
    url: `${url}${path}`,
    connections: plan.connections,
    ...(plan.requests === undefined ? { duration: seconds } : { amount: plan.requests }),
    headers: { origin: ORIGIN, ...headers },
  });
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, Number(count)]),
  );
  return {
    rps: result.requests.total / result.duration,
    total: result.requests.total,
    statuses,
    errors: result.errors + result.timeouts,
    generator: 'autocannon',
  };
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** One request on a kept-alive connection; answers status, headers and body. */
function get(url, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { agent: keepAlive, headers: { origin: ORIGIN, ...headers } },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function post(url, path, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Latency of one request at a time (no queueing in the figure), for a fixed time or a fixed count. */
async function latency(url, path, { seconds, count }) {
  const samples = [];
  const deadline = performance.now() + (seconds ?? Infinity) * 1000;
  let last;
  while (performance.now() < deadline && (count === undefined || samples.length < count)) {
    const started = process.hrtime.bigint();
    last = await get(url, path);
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (last.status !== 200)
      throw new Error(`GET ${path} answered ${last.status}: ${last.body.slice(0, 200)}`);
  }
  samples.sort((a, b) => a - b);
  return {
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    n: samples.length,
    last,
  };
}

// ---- polling throughput --------------------------------------------------------------------------

const pollingRoutes = [
  { route: 'current_state', path: '/api/actions/current_state?group=demo' },
  { route: 'latestdata/All', path: '/api/data/latestdata/All?groupId=demo' },
  { route: 'group/abo', path: '/api/group/abo?group=demo' },
];
/** Polled by every web client too; it has an ETag since issue 26 (not in the bare Koa case). */
const notificationsRoute = {
  route: 'notifications',
  path: '/api/notification/latestdata/notifications?groupId=demo',
};

/** The 304 answers a Hortus server has counted so far (its /metrics, all routes). */
async function answered304(server) {
  const reply = await get(server.url, '/metrics');
  if (reply.status !== 200) throw new Error(`GET /metrics answered ${reply.status}`);
  let sum = 0;
  for (const match of reply.body.matchAll(/^http_requests_total\{[^}]*status="304"[^}]*\} (\d+)$/gmu)) {
    sum += Number(match[1]);
  }
  return sum;
}

async function pollingThroughput() {
  log(
    `polling throughput: ${wrkPath !== undefined && plan.requests === undefined ? `wrk (${wrkPath})` : 'autocannon'}` +
      `${pinning && plan.requests === undefined ? ', servers pinned to core 0 and wrk to core 1' : ''}`,
  );
  log('polling throughput: starting servers');
  // BENCH_REDIS_URL adds a server counting its rate limit in that Redis (RATE_LIMIT_REDIS_URL), polled in
  // the same rounds as the one counting per process: what the shared limit costs per request.
  const redisUrl = process.env.BENCH_REDIS_URL;
  const [httpHello, koaHello, koaRoutes, real, redisLimited] = await Promise.all([
    startServer('http-hello'),
    startServer('koa-hello'),
    startServer('koa-routes'),
    startServer('hortus', { BENCH_DEMO: 'on' }),
    redisUrl === undefined
      ? undefined
      : startServer('hortus', { BENCH_DEMO: 'on', BENCH_RATE_LIMIT_REDIS_URL: redisUrl }),
  ]);
  const servers = [httpHello, koaHello, koaRoutes, real, redisLimited].filter(Boolean);
  const tagOf = async (path, server) => {
    const reply = await get(server.url, path);
    if (reply.status !== 200 || typeof reply.headers.etag !== 'string') {
      throw new Error(`GET ${path} answered ${reply.status} without an ETag`);
    }
    return reply.headers.etag;
  };
  const cases = [
    { name: 'node:http hello', server: httpHello, path: '/hello', expect: 200 },
    { name: 'Koa + router hello', server: koaHello, path: '/hello', expect: 200 },
    ...pollingRoutes.map(({ route, path }) => ({
      name: `bare Koa ${route}`,
      server: koaRoutes,
      path,
      expect: 200,
    })),
    ...pollingRoutes.map(({ route, path }) => ({ name: `Hortus ${route}`, server: real, path, expect: 200 })),
    ...pollingRoutes.map(({ route, path }) => ({
      name: `Hortus ${route} 304`,
      server: real,
      path,
      expect: 304,
      conditional: true,
    })),
    ...(redisLimited === undefined ? [] : pollingRoutes).map(({ route, path }) => ({
      name: `Hortus ${route} 304, limit in Redis`,
      server: redisLimited,
      path,
      expect: 304,
      conditional: true,
    })),
  ];
  // autocannon takes at least a second a run, so the smoke run does without warming up.
  for (const one of plan.warmupSeconds === undefined ? [] : cases) {
    const headers = one.conditional ? { 'if-none-match': await tagOf(one.path, one.server) } : {};
    await load(one.server.url, one.path, plan.warmupSeconds, headers);
  }
  const runs = new Map(cases.map((one) => [one.name, []]));
  const generators = new Set();
  for (let r = 0; r < plan.rounds; r += 1) {
    // Each round visits every case; starting one case later each round spreads the machine's drift.
    const order = cases.map((_, i) => cases[(i + r) % cases.length]);
    for (const one of order) {
      // Fetched each round: the automation engine may switch a demo device and so change a revision.
      const headers = one.conditional ? { 'if-none-match': await tagOf(one.path, one.server) } : {};
      const answeredBefore = one.conditional ? await answered304(one.server) : 0;
      const cpuBefore = await one.server.cpu();
      const result = await load(one.server.url, one.path, plan.seconds, headers);
      result.cpuPerRequest = ((await one.server.cpu()) - cpuBefore) / result.total;
      generators.add(result.generator);
      if (result.generator === 'wrk') {
        // wrk tells 4xx/5xx apart only; the 304 cases are checked on the server's counters.
        result.statuses[one.expect] = one.conditional
          ? (await answered304(one.server)) - answeredBefore
          : result.statuses.failed === 0
            ? result.total
            : 0;
      }
      const expected = result.statuses[one.expect] ?? 0;
      if (result.errors > 0 || expected < 0.95 * result.total) {
        throw new Error(
          `${one.name}: expected ${one.expect}, got ${JSON.stringify(result.statuses)}, ${result.errors} errors`,
        );
      }
      runs.get(one.name).push(result);
    }
    log(`  round ${r + 1}/${plan.rounds} done`);
  }
  // The smoke run drives its cases with autocannon (counts of requests); one second of wrk keeps that path alive.
  if (plan.requests !== undefined && wrkPath !== undefined) {
    const one = cases.at(-1);
    const before = await answered304(one.server);
    const result = await loadWithWrk(one.server.url, one.path, 1, {
      'if-none-match': await tagOf(one.path, one.server),
    });
    const answered = (await answered304(one.server)) - before;
    if (result.errors > 0 || answered < 0.95 * result.total) {
      throw new Error(
        `wrk check: ${result.total} requests, ${answered} answered 304, ${result.errors} errors`,
      );
    }
    log(`  wrk check: ${Math.round(result.rps)} req/s, ${answered} of ${result.total} answered 304`);
  }
  await Promise.all(servers.map((server) => server.stop()));

  const rpsOf = (name) => runs.get(name).map((result) => result.rps);
  const koa = rpsOf('Koa + router hello');
  const bare = rpsOf('node:http hello');
  // Same-round ratios, then their median: both figures of a pair saw the same machine state.
  const ratio = (rps, to) => round(median(rps.map((value, i) => value / to[i])));
  const rows = cases.map((one) => {
    const rps = rpsOf(one.name);
    const route = pollingRoutes.find(({ route: name }) => one.name === `Hortus ${name}`)?.route;
    return {
      case: one.name,
      status: one.expect,
      medianRps: Math.round(median(rps)),
      rps: rps.map(Math.round),
      toKoaHello: ratio(rps, koa),
      toNodeHttp: ratio(rps, bare),
      // A full answer against Koa with no middleware serving the same route from the same store.
      ...(route === undefined ? {} : { toBareKoaRoute: ratio(rps, rpsOf(`bare Koa ${route}`)) }),
      cpuMicrosPerRequest: round(median(runs.get(one.name).map((result) => result.cpuPerRequest)), 1),
    };
  });
  return {
    generator: [...generators].join(' and '),
    pinned: pinning && generators.has('wrk'),
    connections: plan.connections,
    secondsPerRun: plan.seconds ?? 'a few requests',
    rounds: plan.rounds,
    rows,
  };
}

// ---- newest readings with a long history, and the memory it takes ---------------------------------

async function newestReadingsAtScale() {
  const few = 1000;
  log(`newest readings: seeding ${few} and ${plan.manyReadings} readings`);
  const [small, large] = await Promise.all([
    startServer('hortus', { BENCH_SEED_READINGS: String(few) }),
    startServer('hortus', { BENCH_SEED_READINGS: String(plan.manyReadings) }),
  ]);
  const path = '/api/data/latestdata/All?groupId=bench-latest';
  const answer = JSON.parse((await get(large.url, path)).body);
  if (answer.length !== 10) throw new Error(`latestdata/All answered ${answer.length} readings, expected 10`);
  for (const server of [small, large]) await latency(server.url, path, { seconds: plan.latencySeconds });
  const p50s = { few: [], many: [] };
  for (let r = 0; r < plan.latencyRounds; r += 1) {
    p50s.few.push((await latency(small.url, path, { seconds: plan.latencySeconds })).p50);
    p50s.many.push((await latency(large.url, path, { seconds: plan.latencySeconds })).p50);
  }
  const seeded = large.messages.find((message) => message.type === 'seeded');
  const { before, after } = large.memory;
  await Promise.all([small.stop(), large.stop()]);
  return {
    latency: {
      readingsFew: few,
      readingsMany: plan.manyReadings,
      p50MsFew: round(median(p50s.few), 3),
      p50MsMany: round(median(p50s.many), 3),
      ratio: round(median(p50s.many.map((value, i) => value / p50s.few[i]))),
      rounds: plan.latencyRounds,
    },
    memory: {
      readings: plan.manyReadings,
      seedSeconds: round(seeded?.seconds ?? Number.NaN, 1),
      heapUsedMb: round(after.heapUsed / MB, 1),
      arrayBuffersMb: round(after.arrayBuffers / MB, 1),
      heapUsedGrowthMb: round((after.heapUsed - before.heapUsed) / MB, 1),
      arrayBuffersGrowthMb: round((after.arrayBuffers - before.arrayBuffers) / MB, 1),
      rssMb: round(after.rss / MB, 1),
    },
  };
}

// ---- history summarised into buckets ------------------------------------------------------------

/** 30 days into about 500 buckets: `points=500` (the round size that fits: 2 h) and `interval=87m` (497). */
const historyQueries = [
  { name: 'points=500', query: 'points=500' },
  { name: 'interval=87m', query: 'interval=87m' },
];

async function historyLatency(url, readings, measure) {
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

function readingBatches(group, days, endMs) {
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
async function ingest(url, bodies, concurrency) {
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

function bestIngest(runs) {
  return runs.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
}

function ingestRate({ perSecond, concurrency }) {
  return `${perSecond.toLocaleString('en')}/s (${concurrency} batch${concurrency > 1 ? 'es' : ''} at a time)`;
}

/**
 * Ingest one batch at a time, then two (boxes send on their own; the server parses the next batch while the
 * client still reads the last answer), after a warm-up. Four groups each get their batches in time order,
 * as boxes send them; every run stores new readings.
 */
async function ingestRuns(url) {
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

async function memoryHistoryAndIngest() {
  log(`history on the memory store: ${plan.historyDays} days of 20-second readings`);
  const server = await startServer('hortus', { BENCH_HISTORY_DAYS: String(plan.historyDays) });
  const readings = Math.floor((plan.historyDays * DAY_MS) / STEP_MS);
  const history = await historyLatency(server.url, readings, (path) =>
    latency(server.url, path, { seconds: plan.historySeconds }),
  );
  log(`ingest into the memory store: ${plan.ingestBatches} batches of ${BATCH}`);
  const runs = await ingestRuns(server.url);
  await server.stop();
  return { history: { readings, ...history }, ingest: runs };
}

// ---- SQLite (the default store) -------------------------------------------------------------------

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
async function sqliteStore() {
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
    const ingested = await ingestRuns(historyServer.url);
    await historyServer.stop();

    const polling = await sqlitePolling(await dataDir());
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
async function sqlitePolling(dataDirectory) {
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

// ---- MongoDB (the test server) ------------------------------------------------------------------

/** The MongoDB the parts run on: see bench/ferretdb.mjs. */
const mongoServer = () => benchMongoServer(root);

async function dropDatabase(uri, name) {
  const fromAdapter = createRequire(join(root, 'packages/adapter-mongo/package.json'));
  const { MongoClient } = await import(pathToFileURL(fromAdapter.resolve('mongodb')).href);
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/**
 * Polling on the test MongoDB against the memory store, in the same run and on the same demo data: full
 * answers and 304s of each polled route, alternating between the two servers round by round.
 */
async function mongoPolling(uri, database) {
  const mongo = await startServer('hortus', {
    BENCH_MONGODB_URI: uri,
    BENCH_MONGODB_DB: database,
    BENCH_DEMO: 'on',
  });
  const memory = await startServer('hortus', { BENCH_DEMO: 'on' });
  try {
    const figures = {};
    for (const { route, path } of pollingRoutes) {
      for (const conditional of [false, true]) {
        const rates = { mongo: [], memory: [] };
        const run = async (server, seconds) => {
          const reply = conditional ? await get(server.url, path) : undefined;
          const headers = reply === undefined ? {} : { 'if-none-match': reply.headers.etag };
          const before = conditional ? await answered304(server) : 0;
          const result = await load(server.url, path, seconds, headers);
          const notModified = conditional ? (await answered304(server)) - before : 0;
          if (
            result.errors > 0 ||
            (result.statuses.failed ?? 0) > 0 ||
            notModified < (conditional ? 0.95 : 0) * result.total
          ) {
            throw new Error(
              `MongoDB polling ${route}: ${JSON.stringify(result.statuses)}, ${notModified} answered 304, ${result.errors} errors`,
            );
          }
          return result.rps;
        };
        if (plan.warmupSeconds !== undefined) {
          await run(mongo, plan.warmupSeconds);
          await run(memory, plan.warmupSeconds);
        }
        for (let r = 0; r < plan.mongoPollingRounds; r += 1) {
          rates.mongo.push(await run(mongo, plan.seconds ?? 1));
          rates.memory.push(await run(memory, plan.seconds ?? 1));
        }
        figures[`${route}${conditional ? ' 304' : ''}`] = {
          mongoRps: Math.round(median(rates.mongo)),
          memoryRps: Math.round(median(rates.memory)),
          ratio: round(median(rates.mongo.map((value, i) => value / rates.memory[i]))),
        };
      }
    }
    return figures;
  } finally {
    await Promise.all([mongo.stop(), memory.stop()]);
  }
}

async function mongoHistoryAndIngest() {
  const mongo = await mongoServer();
  if (mongo === undefined) {
    log(
      'MongoDB part skipped: no MONGODB_URI and no tools/ferretdb/bin/ferretdb-test (bash scripts/ferretdb.sh build)',
    );
    return { skipped: 'no MONGODB_URI and no FerretDB test server binary' };
  }
  const database = `hortus_bench_${randomBytes(4).toString('hex')}`;
  try {
    const server = await startServer('hortus', {
      BENCH_MONGODB_URI: mongo.uri,
      BENCH_MONGODB_DB: database,
      // A batch of 5000 takes FerretDB seconds once the rollups grow: the bench measures throughput, not
      // the production deadline (MONGODB_TIMEOUT_MS, 2 s), which would answer those batches 503.
      BENCH_MONGODB_TIMEOUT_MS: '120000',
    });
    try {
      const { total, bodies } = readingBatches('bench-history', plan.mongoDays, Date.now());
      log(`ingest into MongoDB (${mongo.kind}): ${total} readings in batches of ${BATCH}, one at a time`);
      // One batch at a time: FerretDB applies updates as unisolated read-modify-writes (see the README).
      const ingested = await ingest(server.url, bodies, 1);
      const history = await historyLatency(server.url, total, (path) =>
        latency(server.url, path, { count: plan.mongoQueries }),
      );
      await server.stop();
      log(`polling on MongoDB (${mongo.kind}) against the memory store`);
      const polling = await mongoPolling(mongo.uri, `${database}_polling`);
      return { server: mongo.kind, ingest: ingested, history: { readings: total, ...history }, polling };
    } finally {
      await server.stop();
    }
  } finally {
    if (mongo.kind === 'given') {
      await dropDatabase(mongo.uri, database);
      await dropDatabase(mongo.uri, `${database}_polling`);
    }
    await mongo.stop();
  }
}

// ---- report -------------------------------------------------------------------------------------

// ---- log-ins beside polling --------------------------------------------------------------------------

const LOGIN_PASSWORD = 'Bench#Login42';
// Below the log-in throttle's allowance per e-mail (10): an attempt is reserved before it is hashed, so more
// log-ins of one account at once than the allowance are refused with 429 whether or not they are right.
const CONCURRENT_LOGINS = 8;
const pollPath = '/api/data/latestdata/All?groupId=demo';

async function logIn(url) {
  const reply = await post(
    url,
    '/api/auth',
    JSON.stringify({ email: 'bench@example.org', password: LOGIN_PASSWORD }),
  );
  if (reply.status !== 200) throw new Error(`log-in answered ${reply.status}: ${reply.body.slice(0, 200)}`);
}

/**
 * bcrypt at cost 12 runs on worker threads: a burst of log-ins must not stall the requests around it.
 * Log-in p50 one at a time, then poll latency idle and while 8 log-ins are in flight at every moment.
 */
async function loginsBesidePolling() {
  // Not pinned to one core: the hashing threads must have a core of their own beside the event loop.
  const server = await startServer(
    'hortus',
    { BENCH_DEMO: 'on', BENCH_ACCOUNT: LOGIN_PASSWORD },
    { pin: false },
  );
  const { url } = server;
  const times = [];
  for (let i = 0; i < plan.logins; i += 1) {
    const started = performance.now();
    await logIn(url);
    times.push(performance.now() - started);
  }
  const idle = await latency(url, pollPath, { seconds: plan.loginPollSeconds });
  let busy = true;
  let completed = 0;
  const loop = async () => {
    while (busy) {
      try {
        await logIn(url);
        completed += 1;
      } catch (error) {
        // Log-ins still queued when the server stops are cut off; only failures while measuring count.
        if (busy) throw error;
      }
    }
  };
  const logins = Array.from({ length: CONCURRENT_LOGINS }, loop);
  // Let the burst start before measuring.
  await delay(100);
  const loaded = await latency(url, pollPath, { seconds: plan.loginPollSeconds });
  busy = false;
  // The hashing queue is left to the server's end rather than waited out.
  await stopChild(server.child);
  await Promise.all(logins);
  return {
    loginP50Ms: round(median(times)),
    logins: plan.logins,
    pollIdle: { p50Ms: round(idle.p50), p99Ms: round(idle.p99), n: idle.n },
    pollDuringLogins: { p50Ms: round(loaded.p50), p99Ms: round(loaded.p99), n: loaded.n },
    concurrentLogins: CONCURRENT_LOGINS,
    loginsCompletedMeanwhile: completed,
  };
}

// ---- capacity: how many polling web clients one server process serves ----------------------------

/** Web clients per group (a school class, a greenhouse crew): each group's box changes what they see. */
const CLIENTS_PER_GROUP = 20;
/** A box sends its readings every four polling periods (20 s in the full run). */
const BOX_PERIODS = 4;
/** New clients start within one period, then one more period lets every client hold its ETags. */
const SETTLE_PERIODS = 2;
const MEASURE_PERIODS = 3;
const CAPACITY_P99_MS = 100;
/** The server's default AUTOMATION_TICK_MS and two seconds for the tick to finish. */
const FIRST_TICK_MS = 12_000;
/** BENCH_CAPACITY_STORES=memory,sqlite,mongo (the default) names the stores the capacity part measures. */
const capacityStores = new Set((process.env.BENCH_CAPACITY_STORES ?? 'memory,sqlite,mongo').split(','));

/**
 * Forks the load generator (bench/capacity.mjs), pinned to core 1 when the server is pinned to core 0.
 * Answers `step(settings)`, which resolves with the generator's figures and the server's CPU share meanwhile.
 */
async function startGenerator(server, { boxes = true } = {}) {
  const child = fork(fileURLToPath(new URL('capacity.mjs', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  if (pinning) execFileSync(tasksetPath, ['-a', '-cp', '1', String(child.pid)], { stdio: 'ignore' });
  const waiting = new Map();
  child.on('message', (message) => {
    waiting.get(message.type)?.(message);
    waiting.delete(message.type);
  });
  const exited = new Promise((_, reject) => {
    child.once('exit', (code) => reject(new Error(`the load generator exited with ${code}`)));
  });
  exited.catch(() => {});
  const next = (type) => Promise.race([new Promise((resolve) => waiting.set(type, resolve)), exited]);
  const period = plan.capacityPeriodMs;
  child.send({
    type: 'start',
    url: server.url,
    periodMs: period,
    boxPeriodMs: boxes ? BOX_PERIODS * period : 0,
  });
  await next('started');
  return {
    step: async (clients) => {
      const measuring = next('measuring');
      child.send({
        type: 'step',
        clients,
        clientsPerGroup: CLIENTS_PER_GROUP,
        settleMs: SETTLE_PERIODS * period,
        measureMs: MEASURE_PERIODS * period,
      });
      await measuring;
      const measured = next('measured');
      const cpuBefore = await server.cpu();
      const started = performance.now();
      const figures = await measured;
      const serverCpu = ((await server.cpu()) - cpuBefore) / 1000 / (performance.now() - started);
      return { ...figures, serverCpu };
    },
    stop: () => stopChild(child),
  };
}

function capacityRow(figures) {
  const ms = (value) => round(value, 1);
  return {
    clients: figures.clients,
    groups: figures.groups,
    requestsPerSecond: Math.round(figures.perSecond),
    p50Ms: ms(figures.p50),
    p90Ms: ms(figures.p90),
    p99Ms: ms(figures.p99),
    maxMs: ms(figures.max),
    answered: figures.answered,
    statuses: figures.statuses,
    routes: figures.routes,
    routeP99Ms: Object.fromEntries(Object.entries(figures.routeP99).map(([route, p99]) => [route, ms(p99)])),
    notModifiedShare: round(figures.notModifiedShare, 3),
    boxPosts: figures.boxPosts,
    errors: figures.errors,
    errorKinds: figures.errorKinds,
    ...(figures.firstError === undefined ? {} : { firstError: figures.firstError }),
    retries: figures.retries,
    connects: figures.connects,
    serverCpu: round(figures.serverCpu),
    // The machine is shared: its load while measuring says how far other work may have moved the figures.
    loadAverage: round(loadavg()[0]),
    generatorCpu: round(figures.generatorCpu),
    generatorLatenessP50Ms: ms(figures.latenessP50),
    generatorLatenessP99Ms: ms(figures.latenessP99),
    generatorLatenessMaxMs: ms(figures.latenessMax),
  };
}

/** Steps of growing client counts on one server, up to the first with p99 >= 100 ms or any error. */
async function capacityOfStore(name, env, stepsOfStore = plan.capacitySteps, { boxes = true } = {}) {
  const most = Math.max(...stepsOfStore);
  const server = await startServer('hortus', {
    ...env,
    // One connection per client and per box, with room to spare.
    BENCH_MAX_CONNECTIONS: String(most + Math.ceil(most / CLIENTS_PER_GROUP) + 1000),
  });
  const ready = performance.now();
  /** The store holds the groups the step's clients watch, as a deployment of that many clients would. */
  const seedGroups = (count) =>
    new Promise((resolve, reject) => {
      const exited = (code) => reject(new Error(`server exited with ${code} while adding groups`));
      const seeded = (message) => {
        if (message.type !== 'groups') return;
        server.child.off('message', seeded);
        server.child.off('exit', exited);
        if (message.error === undefined) resolve(message);
        else reject(new Error(`adding ${count} groups failed: ${message.error}`));
      };
      server.child.on('message', seeded);
      server.child.once('exit', exited);
      server.child.send({ type: 'groups', count });
    });
  const generator = await startGenerator(server, { boxes });
  const steps = [];
  let stopped;
  try {
    for (const [index, clients] of stepsOfStore.entries()) {
      let seeded;
      try {
        seeded = await seedGroups(Math.ceil(clients / CLIENTS_PER_GROUP));
      } catch (error) {
        // Reported beside the steps measured so far: the store could not even take the groups in.
        stopped = error.message;
        log(`capacity, ${name}: ${stopped}`);
        break;
      }
      log(`capacity, ${name}: ${seeded.count} groups in the store (${round(seeded.seconds, 1)} s to add)`);
      // The automation engine's first tick (AUTOMATION_TICK_MS, 10 s, after start) records every group's
      // state; a start-up cost, let pass before the first step so that no step measures it.
      if (index === 0 && !smoke) await delay(Math.max(0, FIRST_TICK_MS - (performance.now() - ready)));
      const row = capacityRow(await generator.step(clients));
      steps.push(row);
      log(
        `  ${clients} clients: ${row.requestsPerSecond} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ` +
          `${row.errors} errors, ${Math.round(row.notModifiedShare * 100)} % 304, server CPU ` +
          `${row.serverCpu}, generator CPU ${row.generatorCpu}, lateness p99 ${row.generatorLatenessP99Ms} ms, ` +
          `p99 per route ${JSON.stringify(row.routeP99Ms)}`,
      );
      if (row.p99Ms >= CAPACITY_P99_MS || row.errors > 0) break;
    }
  } finally {
    await generator.stop();
    await server.stop();
  }
  const passed = steps.filter((row) => row.p99Ms < CAPACITY_P99_MS && row.errors === 0);
  return {
    store: name,
    capacity: passed.at(-1)?.clients ?? 0,
    // The largest step passed too: the capacity is at least that, the bench did not look further.
    openEnded: passed.length === stepsOfStore.length,
    ...(stopped === undefined ? {} : { stopped }),
    steps,
  };
}

/** The capacity steps on one MongoDB server: with boxes posting, then web clients alone. */
async function mongoCapacity(mongo) {
  const database = `hortus_bench_${randomBytes(4).toString('hex')}`;
  // Each step's groups are added through a connection with a deadline of its own (bench/server.mjs).
  const seeding = { BENCH_SEED_MONGODB_TIMEOUT_MS: '120000' };
  try {
    const figures = await capacityOfStore(
      'test MongoDB',
      { BENCH_MONGODB_URI: mongo.uri, BENCH_MONGODB_DB: database, ...seeding },
      plan.mongoCapacitySteps,
    );
    // FerretDB's writes (each reading batch updates the rollups, a scan of the collection on FerretDB v1)
    // end the steps above long before the polling does: the same steps without boxes show the server's side.
    const pollingOnly = await capacityOfStore(
      'test MongoDB, web clients only (no readings arriving)',
      { BENCH_MONGODB_URI: mongo.uri, BENCH_MONGODB_DB: `${database}_polling`, ...seeding },
      plan.capacitySteps,
      { boxes: false },
    );
    return [figures, pollingOnly].map((store) => ({ ...store, server: mongo.kind }));
  } finally {
    if (mongo.kind === 'given') {
      await dropDatabase(mongo.uri, database);
      await dropDatabase(mongo.uri, `${database}_polling`);
    }
    await mongo.stop();
  }
}

/**
 * Web clients polling the dashboard (latestdata/All, notifications, group/abo) every period with the ETags
 * their browser keeps, each on its own connection, spread evenly over the period; boxes post readings.
 */
async function capacity() {
  const dirs = [];
  try {
    const results = {
      periodMs: plan.capacityPeriodMs,
      clientsPerGroup: CLIENTS_PER_GROUP,
      boxPeriodMs: BOX_PERIODS * plan.capacityPeriodMs,
      settleMs: SETTLE_PERIODS * plan.capacityPeriodMs,
      measureMs: MEASURE_PERIODS * plan.capacityPeriodMs,
      pinned: pinning,
      stores: [],
    };
    if (capacityStores.has('memory')) results.stores.push(await capacityOfStore('memory store', {}));
    if (capacityStores.has('sqlite')) {
      const dir = await mkdtemp(join(tmpdir(), 'hortus-bench-capacity-'));
      dirs.push(dir);
      results.stores.push(await capacityOfStore('SQLite', { BENCH_DATA_DIR: dir }));
    }
    if (!capacityStores.has('mongo')) return results;
    // One run per FerretDB backend named in BENCH_FERRETDB_BACKEND (sqlite,postgresql measures both).
    for (const backend of benchMongoBackends()) {
      const mongo = await benchMongoServer(root, backend);
      if (mongo === undefined) {
        results.mongoSkipped = 'no MONGODB_URI and no FerretDB test server binary';
        log(`capacity on MongoDB skipped: ${results.mongoSkipped}`);
        return results;
      }
      results.stores.push(...(await mongoCapacity(mongo)));
    }
    return results;
  } finally {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

function targets(results) {
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  if (results.polling !== undefined) {
    const { rows } = results.polling;
    const koaHello = rows.find((row) => row.case === 'Koa + router hello');
    for (const { route } of pollingRoutes) {
      const full = rows.find((row) => row.case === `Hortus ${route}`);
      const cached = rows.find((row) => row.case === `Hortus ${route} 304`);
      add(
        `Polling ${route}, full answer, memory store`,
        '>= 0.9 x bare Koa, same route and store',
        `${full.toBareKoaRoute} x (${full.toKoaHello} x Koa hello)`,
        full.toBareKoaRoute >= 0.9,
      );
      add(
        `Polling ${route}, 304, memory store`,
        '>= 0.85 x Koa + router hello',
        `${cached.toKoaHello} x (${cached.cpuMicrosPerRequest} vs ${koaHello.cpuMicrosPerRequest} us CPU per request)`,
        cached.toKoaHello >= 0.85,
      );
    }
  }
  if (results.scale !== undefined) {
    const { latency, memory } = results.scale;
    add(
      `latestdata/All p50, ${latency.readingsMany.toLocaleString('en')} vs ${latency.readingsFew} readings`,
      '<= 1.3 x',
      `${latency.ratio} x (${latency.p50MsMany} ms vs ${latency.p50MsFew} ms)`,
      latency.ratio <= 1.3,
    );
    // Typed-array columns live outside V8's heap (arrayBuffers): both count.
    const total = memory.heapUsedMb + memory.arrayBuffersMb;
    add(
      `Memory of ${memory.readings.toLocaleString('en')} readings (memory store)`,
      '< 400 MB',
      `${round(total, 1)} MB = heapUsed ${memory.heapUsedMb} + arrayBuffers ${memory.arrayBuffersMb} (whole process)`,
      total < 400,
    );
  }
  if (results.sqlite !== undefined) {
    const { latest, polling, ingest: ingested } = results.sqlite;
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
  }
  const histories = [
    ['memory store', results.memoryStore?.history, 50],
    ['SQLite', results.sqlite?.history, 50],
    ['test MongoDB', results.mongo?.history, 300],
  ];
  for (const [store, history, limitMs] of histories) {
    if (history === undefined) continue;
    for (const { name } of historyQueries) {
      const figure = history[name];
      add(
        `History of ${history.readings.toLocaleString('en')} readings, ${name} (${figure.buckets} buckets), ${store}`,
        `p50 < ${limitMs} ms`,
        `${figure.p50Ms} ms`,
        figure.p50Ms < limitMs,
      );
    }
  }
  if (results.memoryStore !== undefined) {
    const best = bestIngest(results.memoryStore.ingest);
    add('Ingest over HTTP, memory store', '>= 50,000 readings/s', ingestRate(best), best.perSecond >= 50_000);
  }
  if (results.mongo?.ingest !== undefined) {
    const { perSecond } = results.mongo.ingest;
    add(
      'Ingest over HTTP, test MongoDB',
      '>= 5,000 readings/s',
      `${perSecond.toLocaleString('en')}/s`,
      perSecond >= 5000,
    );
  }
  for (const [route, figure] of Object.entries(results.mongo?.polling ?? {})) {
    add(
      `Polling ${route.endsWith(' 304') ? `${route.slice(0, -4)}, 304` : `${route}, full answer`}, test MongoDB vs memory store`,
      '>= 0.7 x',
      `${figure.ratio} x (${figure.mongoRps.toLocaleString('en')} vs ${figure.memoryRps.toLocaleString('en')} req/s)`,
      figure.ratio >= 0.7,
    );
  }
  if (results.logins !== undefined) {
    const { pollIdle, pollDuringLogins, concurrentLogins } = results.logins;
    const added = round(pollDuringLogins.p99Ms - pollIdle.p99Ms);
    add(
      `Poll p99 while ${concurrentLogins} log-ins run at once`,
      '<= idle p99 + 5 ms',
      `${pollDuringLogins.p99Ms} ms vs ${pollIdle.p99Ms} ms idle (${signed(added)} ms)`,
      added <= 5,
    );
  }
  for (const figure of results.capacity?.stores ?? []) {
    const goal = figure.store.startsWith('test MongoDB') ? 5000 : 10_000;
    const failed = figure.steps.find((row) => row.p99Ms >= CAPACITY_P99_MS || row.errors > 0);
    const why =
      failed !== undefined
        ? ` (${failed.clients.toLocaleString('en')}: p99 ${failed.p99Ms} ms, ${failed.errors} errors)`
        : figure.stopped !== undefined
          ? ` (then ${figure.stopped})`
          : ' (the largest step; not looked further)';
    add(
      `Capacity, ${figure.store}${figure.server === undefined ? '' : ` (${figure.server})`}: web clients polling every ${results.capacity.periodMs / 1000} s, ` +
        `p99 < ${CAPACITY_P99_MS} ms and no errors`,
      `>= ${goal.toLocaleString('en')} clients`,
      `${figure.capacity.toLocaleString('en')}${why}`,
      figure.capacity >= goal,
    );
  }
  list.push(...boxesTargets(results.boxes));
  list.push(...engineTargets(results.engine));
  list.push(...cliTargets(results.cli));
  return list;
}

function capacityMarkdown(capacity) {
  const { periodMs, clientsPerGroup, boxPeriodMs, settleMs, measureMs, pinned } = capacity;
  const lines = [
    '',
    `Capacity: simulated web clients, each on its own keep-alive connection, poll latestdata/All, ` +
      `notifications and group/abo one after another every ${periodMs / 1000} s, sending the If-None-Match ` +
      `of their last 200 as a browser does; starts spread evenly over the period. ${clientsPerGroup} clients ` +
      `per group; each group's box posts 6 readings every ${boxPeriodMs / 1000} s on a connection of its own. ` +
      "The store holds the groups of the step's clients (an hour of one box's readings and a notification " +
      "each), added before the step; the automation engine's first tick after start is let pass first. " +
      `Per step: new clients start within one period, ${settleMs / 1000} s in all before ${measureMs / 1000} s ` +
      'of measuring; stops after the first step with p99 >= 100 ms or an error. Latency from the write of a ' +
      'request to the end of its answer (box posts included); errors: socket errors, timeouts (10 s), closes ' +
      'without an answer, unexpected statuses, and periods due while the last was still unanswered. Retries: ' +
      "requests resent once on a new connection because the server's keep-alive timeout closed the old one " +
      `as they were sent, as browsers do. CPU as a share of one core${pinned ? '; server pinned to core 0, generator (bench/capacity.mjs) to core 1' : ''}. ` +
      'Lateness: how late the generator began a period.',
  ];
  for (const figure of capacity.stores) {
    lines.push(
      '',
      `${figure.store}${figure.server === undefined ? '' : ` (${figure.server})`}:`,
      '',
      '| Clients | Groups | req/s | p50 ms | p90 ms | p99 ms | max ms | 304 share | Errors | Retries | ' +
        'New connections | Server CPU | Generator CPU | Lateness p50 / p99 ms | Load average |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...figure.steps.map(
        (row) =>
          `| ${row.clients.toLocaleString('en')} | ${row.groups} | ${row.requestsPerSecond.toLocaleString('en')} | ` +
          `${row.p50Ms} | ${row.p90Ms} | ${row.p99Ms} | ${row.maxMs} | ${Math.round(row.notModifiedShare * 100)} % | ` +
          `${row.errors}${row.firstError === undefined ? '' : ` (${row.firstError})`} | ${row.retries} | ` +
          `${row.connects} | ${row.serverCpu} | ${row.generatorCpu} | ` +
          `${row.generatorLatenessP50Ms} / ${row.generatorLatenessP99Ms} | ${row.loadAverage} |`,
      ),
    );
    if (figure.stopped !== undefined) lines.push('', `Stopped: ${figure.stopped}.`);
    const last = figure.steps.at(-1);
    if (last !== undefined) {
      const answers = Object.entries(last.routes)
        .map(
          ([route, statuses]) =>
            `${route} ${Object.entries(statuses)
              .map(([status, count]) => `${count.toLocaleString('en')} x ${status}`)
              .join(', ')}`,
        )
        .join('; ');
      lines.push('', `Answers at ${last.clients.toLocaleString('en')} clients, per route: ${answers}.`);
    }
  }
  if (capacity.mongoSkipped !== undefined)
    lines.push('', `Capacity on MongoDB skipped: ${capacity.mongoSkipped}.`);
  return lines;
}

function markdown(results) {
  const { machine } = results;
  const lines = [
    `Measured ${results.date} on ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGb} GB, ` +
      `Node ${machine.node} (${machine.platform})${results.smoke ? ' - SMOKE RUN, the figures mean nothing' : ''}.`,
    '',
    '| Target | Goal | Measured | Met |',
    '|---|---|---|---|',
    ...results.targets.map(
      ({ name, goal, measured, met }) => `| ${name} | ${goal} | ${measured} | ${met ? 'yes' : 'NO'} |`,
    ),
  ];
  if (results.polling !== undefined) {
    const { generator, pinned, connections, secondsPerRun, rounds, rows } = results.polling;
    const driver =
      generator === 'wrk'
        ? `wrk (one thread${pinned ? ', pinned to core 1; every server pinned to core 0' : ''})`
        : generator === 'autocannon'
          ? 'autocannon in the bench process'
          : generator;
    lines.push(
      '',
      `Throughput: ${driver}, each server in a process of its own, ${connections} ` +
        `connections, ${secondsPerRun} s per run, ${rounds} rounds visiting every case in turn; medians, and ` +
        'ratios as medians of same-round ratios. Server CPU: microseconds of CPU (user + system) the server ' +
        'process spent per request, median over the rounds.',
      '',
      '| Case | Status | Median req/s | x Koa hello | x node:http | x bare Koa, same route | Server CPU per request |',
      '|---|---|---|---|---|---|---|',
      ...rows.map(
        (row) =>
          `| ${row.case} | ${row.status} | ${row.medianRps.toLocaleString('en')} | ${row.toKoaHello} | ` +
          `${row.toNodeHttp} | ${row.toBareKoaRoute ?? ''} | ${row.cpuMicrosPerRequest} us |`,
      ),
    );
  }
  if (results.scale !== undefined) {
    const { memory } = results.scale;
    lines.push(
      '',
      `Memory store with ${memory.readings.toLocaleString('en')} readings (seeded in ${memory.seedSeconds} s): ` +
        `heapUsed ${memory.heapUsedMb} MB (${signed(memory.heapUsedGrowthMb)} MB while seeding), arrayBuffers ` +
        `${memory.arrayBuffersMb} MB (${signed(memory.arrayBuffersGrowthMb)} MB), rss ${memory.rssMb} MB.`,
    );
  }
  if (results.sqlite?.file !== undefined) {
    const { file, latest } = results.sqlite;
    lines.push(
      '',
      `SQLite with ${file.readings.toLocaleString('en')} readings (seeded in ${file.seedSeconds} s): file ` +
        `${file.megabytes} MB (${file.megabytesPerMillion} MB per million readings), rss ${file.rssMb} MB; ` +
        `newest temperature p50 ${latest.newestTemperatureP50Ms} ms.`,
    );
  }
  const ingests = [
    ...(results.memoryStore?.ingest ?? []).map(
      (run) => `memory store, ${run.concurrency} at a time: ${run.perSecond.toLocaleString('en')}/s`,
    ),
    ...(results.sqlite?.ingest ?? []).map(
      (run) => `SQLite, ${run.concurrency} at a time: ${run.perSecond.toLocaleString('en')}/s`,
    ),
    ...(results.mongo?.ingest === undefined
      ? []
      : [
          `test MongoDB (${results.mongo.server}), one at a time: ${results.mongo.ingest.perSecond.toLocaleString('en')}/s`,
        ]),
  ];
  if (ingests.length > 0)
    lines.push('', `Ingest (batches of ${BATCH} readings over HTTP): ${ingests.join('; ')}.`);
  if (results.mongo?.skipped !== undefined) lines.push('', `MongoDB part skipped: ${results.mongo.skipped}.`);
  if (results.logins !== undefined) {
    const { loginP50Ms, logins, pollIdle, pollDuringLogins, concurrentLogins, loginsCompletedMeanwhile } =
      results.logins;
    lines.push(
      '',
      `Log-in (bcrypt cost 12 on worker threads): p50 ${loginP50Ms} ms over ${logins} log-ins one at a time. ` +
        `Polling ${pollPath} one request at a time: p50 ${pollIdle.p50Ms} ms, p99 ${pollIdle.p99Ms} ms idle; ` +
        `p50 ${pollDuringLogins.p50Ms} ms, p99 ${pollDuringLogins.p99Ms} ms while ${concurrentLogins} log-ins ` +
        `were in flight (${loginsCompletedMeanwhile} completed meanwhile).`,
    );
  }
  if (results.capacity !== undefined) lines.push(...capacityMarkdown(results.capacity));
  if (results.boxes !== undefined) lines.push(...boxesMarkdown(results.boxes));
  lines.push(...engineMarkdown(results.engine));
  lines.push(...cliMarkdown(results.cli));
  return `${lines.join('\n')}\n`;
}

async function main() {
  const started = performance.now();
  for (const pkg of ['core', 'adapter-memory', 'adapter-sqlite', 'adapter-mongo', 'http-koa', 'cli']) {
    if (!existsSync(join(root, `packages/${pkg}/dist/src/index.js`))) {
      throw new Error(`packages/${pkg} is not built: run the build first (npx pnpm@10.34.9 build)`);
    }
  }
  const [cpu] = cpus();
  const results = {
    date: new Date().toISOString(),
    smoke,
    machine: {
      cpus: cpus().length,
      cpuModel: cpu?.model.trim() ?? 'unknown',
      memoryGb: Math.round(totalmem() / 1024 ** 3),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    plan,
  };
  const timed = async (part, measure) => {
    if (!parts.has(part)) return undefined;
    const partStarted = performance.now();
    const result = await measure();
    log(`  ${part}: ${round((performance.now() - partStarted) / 1000, 1)} s`);
    return result;
  };
  results.polling = await timed('polling', pollingThroughput);
  results.scale = await timed('scale', newestReadingsAtScale);
  results.memoryStore = await timed('memory', memoryHistoryAndIngest);
  results.sqlite = await timed('sqlite', sqliteStore);
  if (results.sqlite === undefined && parts.has('sqlite-polling')) {
    const directory = await mkdtemp(join(tmpdir(), 'hortus-bench-sqlite-'));
    results.sqlite = { polling: await timed('sqlite-polling', () => sqlitePolling(directory)) };
    await rm(directory, { recursive: true, force: true });
  }
  results.mongo = await timed('mongo', mongoHistoryAndIngest);
  results.logins = await timed('logins', loginsBesidePolling);
  results.capacity = await timed('capacity', capacity);
  results.boxes = await timed('boxes', () =>
    boxesPart({ startServer, mongoServer, dropDatabase, log, smoke }),
  );
  results.engine = await timed('engine', () => enginePart({ smoke }));
  results.cli = await timed('cli', () => cliStart({ rounds: smoke ? 1 : 5 }));
  results.targets = targets(results);
  results.seconds = round((performance.now() - started) / 1000, 1);

  // Only a full run of every part replaces the published figures.
  const published = !smoke && onlyArgument === undefined;
  const directory = published ? join(root, 'bench/results') : await mkdtemp(join(tmpdir(), 'hortus-bench-'));
  await mkdir(directory, { recursive: true });
  const table = markdown(results);
  await writeFile(join(directory, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(directory, 'latest.md'), table);
  process.stdout.write(table);
  log(`written to ${directory} in ${results.seconds} s`);
}

const cleanUp = async () => {
  await Promise.all([...children].map((child) => stopChild(child)));
  keepAlive.destroy();
};

main().then(cleanUp, async (error) => {
  log(`bench failed: ${error?.stack ?? error}`);
  await cleanUp();
  process.exitCode = 1;
});
// Ctrl-C must not leave servers behind.
process.once('SIGINT', () => {
  cleanUp().finally(() => process.exit(130));
});
