// What every part of `pnpm bench` shares: the plan (seconds and counts, tiny in the smoke run), the servers
// under test (bench/server.mjs, each in a process of its own), the load generators (wrk or autocannon),
// single requests, and the statistics. bench/run.mjs parses the options and builds one with createBench.
import autocannon from 'autocannon';
import { Buffer } from 'node:buffer';
import { execFile, execFileSync, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { delimiter, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { benchMongoServer } from './ferretdb.mjs';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const ORIGIN = 'http://localhost:3000';
export const MB = 1024 * 1024;

export const log = (line) => process.stderr.write(`${line}\n`);
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
export const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
export const signed = (value) => (value < 0 ? `${value}` : `+${value}`);

/** Seconds and counts of each part; the smoke run keeps every part but makes it tiny. */
export function benchPlan(smoke) {
  return smoke
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
}

/** Every process the bench started: cleanUp ends those still running. */
export const children = new Set();

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
export const wrkPath = process.env.BENCH_GENERATOR === 'autocannon' ? undefined : onPath('wrk');
/**
 * With taskset, each server is pinned to core 0 and wrk to core 1 (on a machine with two or more cores), so
 * the two never queue behind each other on one core: every case gets the same single core, which is what
 * the ratios compare. BENCH_PIN=off turns it off.
 */
export const tasksetPath =
  process.env.BENCH_PIN === 'off' || cpus().length < 2 ? undefined : onPath('taskset');
export const pinning = wrkPath !== undefined && tasksetPath !== undefined;

/** Forks bench/server.mjs; resolves once it listens. Its stdout (the request log) goes to /dev/null. */
export function startServer(kind, env = {}, { pin = true } = {}) {
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

export async function stopChild(child) {
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

export const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** One request on a kept-alive connection; answers status, headers and body. */
export function get(url, path, headers = {}) {
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

export function post(url, path, body) {
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
export async function latency(url, path, { seconds, count }) {
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
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
    n: samples.length,
    last,
  };
}

/** The MongoDB the parts run on: see bench/ferretdb.mjs. */
export const mongoServer = () => benchMongoServer(root);

export async function dropDatabase(uri, name) {
  const fromAdapter = createRequire(join(root, 'packages/adapter-mongo/package.json'));
  const { MongoClient } = await import(pathToFileURL(fromAdapter.resolve('mongodb')).href);
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/** The 304 answers a Hortus server has counted so far (its /metrics, all routes). */
export async function answered304(server) {
  const reply = await get(server.url, '/metrics');
  if (reply.status !== 200) throw new Error(`GET /metrics answered ${reply.status}`);
  let sum = 0;
  for (const match of reply.body.matchAll(/^http_requests_total\{[^}]*status="304"[^}]*\} (\d+)$/gmu)) {
    sum += Number(match[1]);
  }
  return sum;
}

/** Ends every server and generator still running, and the kept-alive connection. */
export async function cleanUp() {
  await Promise.all([...children].map((child) => stopChild(child)));
  keepAlive.destroy();
}

/**
 * What a part is given: the plan, and the helpers that depend on it (the load generators use its
 * connections, and in the smoke run its count of requests), beside the plain ones above.
 */
export function createBench({ smoke }) {
  const plan = benchPlan(smoke);
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

  return {
    smoke,
    plan,
    root,
    log,
    startServer,
    stopChild,
    load,
    loadWithWrk,
    get,
    post,
    latency,
    answered304,
    mongoServer,
    dropDatabase,
    pinning,
    tasksetPath,
    wrkPath,
  };
}
