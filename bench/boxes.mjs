// The `boxes` part of `pnpm bench` (issue 22 item 6): what HTTP boxes cost the server.
// A box's round is 12 single-reading inserts and one find every 20 s, each on a new TLS connection.
// 1. TLS: Hortus terminating TLS against a bare Node HTTPS server (same certificate, same answers, nothing
//    stored), under the same generator in the same run; a new connection per request, as the boxes make.
// 2. Keep-alive HTTP (as behind a TLS-terminating proxy): single-reading inserts and finds (12 : 1) on each
//    store, per second of server CPU, so "per server core" does not depend on what else the machine runs.
// The generator runs in this process; the server in its own. Both sides' CPU is reported, so the limit
// (the side near one full core) can be named.
import { Buffer } from 'node:buffer';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URL } from 'node:url';
import { BOX_TOPICS } from './box.mjs';

const GROUPS = 50;
const FIND_EVERY = 13;

const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The n-th request of a run: 12 inserts of one reading, then the find of its group's actions. */
function boxRequest(n) {
  const group = `box-${n % GROUPS}`;
  if (n % FIND_EVERY === FIND_EVERY - 1) {
    return { method: 'GET', path: `/api/actions/current_state?group=${group}`, body: undefined };
  }
  // Distinct times per request: a repeated (group, topic, time) would be a duplicate, not a stored reading.
  const reading = {
    group,
    topic: BOX_TOPICS[n % BOX_TOPICS.length],
    value: 20 + (n % 100) / 10,
    time: new Date(Date.now() - 60_000 + (n % 60_000)).toISOString(),
  };
  return { method: 'POST', path: '/api/data/readings', body: JSON.stringify(reading) };
}

/** One request; resolves with its status. `agent: false` makes a new connection (and TLS handshake) each. */
function send(url, { method, path, body }, agent) {
  const target = new URL(path, url);
  const requester = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const sent = requester(
      target,
      {
        method,
        agent,
        rejectUnauthorized: false,
        headers:
          body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/**
 * `concurrency` workers send box requests for `seconds` (or `count` requests in all); the server's and this
 * process's CPU over the run, and the latencies.
 */
async function drive(server, url, { seconds, count, concurrency, agent }) {
  let next = 0;
  let failed = 0;
  const latencies = [];
  const statuses = new Map();
  const deadline = seconds === undefined ? Infinity : performance.now() + seconds * 1000;
  const serverCpuBefore = await server.cpu();
  const ownCpuBefore = process.cpuUsage();
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < deadline && (count === undefined || next < count)) {
      const n = next;
      next += 1;
      const sent = performance.now();
      try {
        const status = await send(url, boxRequest(n), agent);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 400) failed += 1;
      } catch {
        failed += 1;
      }
      latencies.push(performance.now() - sent);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallSeconds = (performance.now() - started) / 1000;
  const serverCpuSeconds = ((await server.cpu()) - serverCpuBefore) / 1e6;
  const { user, system } = process.cpuUsage(ownCpuBefore);
  latencies.sort((a, b) => a - b);
  const requests = latencies.length;
  // A refused or failed request is a broken case, not a figure (the smoke run in CI fails on it).
  if (failed > 0)
    throw new Error(
      `boxes: ${failed} of ${requests} requests to ${url} failed: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  const finds = Math.floor(requests / FIND_EVERY);
  return {
    requests,
    inserts: requests - finds,
    finds,
    failed,
    statuses: Object.fromEntries(statuses),
    perSecond: round(requests / wallSeconds, 0),
    p99Ms: round(latencies[Math.min(requests - 1, Math.floor(0.99 * requests))] ?? 0, 1),
    serverCpu: round(serverCpuSeconds / wallSeconds),
    generatorCpu: round((user + system) / 1e6 / wallSeconds),
    perServerCpuSecond: round(requests / Math.max(serverCpuSeconds, 1e-6), 0),
    insertsPerServerCpuSecond: round((requests - finds) / Math.max(serverCpuSeconds, 1e-6), 0),
    findsPerServerCpuSecond: round(finds / Math.max(serverCpuSeconds, 1e-6), 0),
  };
}

/** Which side was the limit: the one that used (nearly) a whole core. */
function limit(run) {
  if (run.generatorCpu >= 0.9 && run.generatorCpu >= run.serverCpu) return 'generator';
  if (run.serverCpu >= 0.9) return 'server';
  return "neither (latency or the machine's other load)";
}

/**
 * @param {object} tools from run.mjs: startServer(kind, env), mongoServer(), dropDatabase(uri, name), log(text), plan
 */
export async function boxesPart({ startServer, mongoServer, dropDatabase, log, plan, smoke }) {
  const tlsDir = await mkdtemp(join(tmpdir(), 'hortus-bench-tls-'));
  const run = smoke ? { count: 40 } : { seconds: plan.seconds * 2 };
  const result = { load: loadavg().map((value) => round(value)), tls: undefined, keepAlive: [] };
  try {
    // 1. TLS, a new connection per request, on the memory store: Hortus, then the bare server.
    const hortus = await startServer('hortus', { BENCH_TLS_DIR: tlsDir }, { pin: false });
    const withHortus = await drive(hortus, hortus.httpsUrl, { ...run, concurrency: 16, agent: false });
    await hortus.stop();
    const bare = await startServer('https-bare', { BENCH_TLS_DIR: tlsDir }, { pin: false });
    const withBare = await drive(bare, bare.url, { ...run, concurrency: 16, agent: false });
    await bare.stop();
    const ratio = round(withHortus.perSecond / Math.max(withBare.perSecond, 1));
    // A box sends 13 requests per 20 s round: 0.65 per second.
    const boxesPerCore = Math.floor(withHortus.perServerCpuSecond / 0.65);
    result.tls = { hortus: withHortus, bare: withBare, ratio, boxesPerCore, limit: limit(withHortus) };
    log(
      `  boxes TLS: Hortus ${withHortus.perSecond}/s vs bare HTTPS ${withBare.perSecond}/s (${ratio}x), ` +
        `${boxesPerCore} boxes per server core; limit: ${result.tls.limit}`,
    );

    // 2. Keep-alive HTTP on each store.
    const mongo = smoke ? undefined : await mongoServer();
    const stores = [
      { name: 'memory', env: {} },
      { name: 'sqlite', env: { BENCH_DATA_DIR: await mkdtemp(join(tmpdir(), 'hortus-bench-boxes-')) } },
      ...(mongo === undefined
        ? []
        : [
            {
              name: 'mongodb',
              env: { BENCH_MONGODB_URI: mongo.uri, BENCH_MONGODB_DB: `bench_boxes_${Date.now()}` },
            },
          ]),
    ];
    for (const { name, env } of stores) {
      const server = await startServer('hortus', env, { pin: false });
      const agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
      const figures = await drive(server, server.url, { ...run, concurrency: 64, agent });
      agent.destroy();
      await server.stop();
      if (env.BENCH_DATA_DIR !== undefined) await rm(env.BENCH_DATA_DIR, { recursive: true, force: true });
      if (env.BENCH_MONGODB_DB !== undefined) await dropDatabase(mongo.uri, env.BENCH_MONGODB_DB);
      result.keepAlive.push({ store: name, ...figures, limit: limit(figures) });
      log(
        `  boxes keep-alive ${name}: ${figures.perSecond}/s, ${figures.insertsPerServerCpuSecond} inserts + ` +
          `${figures.findsPerServerCpuSecond} finds per server CPU second, p99 ${figures.p99Ms} ms; limit: ${limit(figures)}`,
      );
    }
    await mongo?.stop();
  } finally {
    await rm(tlsDir, { recursive: true, force: true });
  }
  return result;
}

/** The boxes part's lines of the report. */
export function boxesMarkdown(boxes) {
  const lines = ['', '### Boxes (HTTP firmware)', ''];
  lines.push(`Load average when the part started: ${boxes.load.join(', ')}.`, '');
  if (boxes.tls !== undefined) {
    const { hortus, bare, ratio, boxesPerCore, limit: side } = boxes.tls;
    lines.push(
      '| TLS, new connection per request (memory store) | req/s | p99 ms | server CPU | generator CPU |',
      '|---|---|---|---|---|',
      `| Hortus terminating TLS | ${hortus.perSecond} | ${hortus.p99Ms} | ${hortus.serverCpu} | ${hortus.generatorCpu} |`,
      `| bare Node HTTPS, same answers | ${bare.perSecond} | ${bare.p99Ms} | ${bare.serverCpu} | ${bare.generatorCpu} |`,
      '',
      `Hortus / bare: ${ratio}x (goal >= 0.8). ${boxesPerCore} boxes per server core ` +
        `(${hortus.perServerCpuSecond} requests per server CPU second / 0.65 per box). Limit: ${side}.`,
      '',
    );
  }
  lines.push(
    '| keep-alive HTTP, 12 inserts : 1 find | req/s | inserts per server CPU s | finds per server CPU s | p99 ms | server CPU | generator CPU | limit |',
    '|---|---|---|---|---|---|---|---|',
    ...boxes.keepAlive.map(
      (row) =>
        `| ${row.store} | ${row.perSecond} | ${row.insertsPerServerCpuSecond} | ${row.findsPerServerCpuSecond} | ` +
        `${row.p99Ms} | ${row.serverCpu} | ${row.generatorCpu} | ${row.limit} |`,
    ),
    '',
    'Goal per server core: 3,250 single-reading inserts + 250 finds per second (5,000 boxes).',
  );
  return lines;
}
