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
// The simulator's firmware facts (topics, Berlin wall-clock stamps), from the build `pnpm bench` makes first.
import { berlinStampOf, FIRMWARE_TOPICS } from '../packages/cli/dist/src/index.js';

/** A box's round: 12 single-reading inserts, then the find of its actions. */
const FIND_EVERY = 13;
/** Boxes registered for the part (two a group): each request is one box's, with that box's own key. */
const BOXES = 100;
const BOX_PATH = '/api/box/v1/action';

const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * The firmware's requests, box after box: the n-th is box n % BOXES's, a find every 13th, else an insertOne
 * of the next topic. Bodies and headers as COMPAT "Boxes" gives them: application/ejson, a value with two
 * decimals as text, and a whole-second Berlin wall-clock `$date` labelled Z. A (group, topic, time) stored
 * twice would be a duplicate, not a reading: each group's topic steps one second back per reading, from the
 * second the generator was made (minutes stay within the clock-skew limit).
 */
export function boxRequests(boxes) {
  const base = Math.floor(Date.now() / 1000) * 1000;
  // How far Berlin's wall clock is ahead of UTC now (1 h in winter, 2 h in summer), taken once: a stamp per
  // request through Intl would cost the generator more than the server's answer.
  const offset = Date.parse(berlinStampOf(new Date(base))) - base;
  const steps = new Map();
  return (n) => {
    const box = boxes[n % boxes.length];
    if (n % FIND_EVERY === FIND_EVERY - 1) {
      return {
        method: 'POST',
        path: `${BOX_PATH}/find`,
        headers: { 'content-type': 'application/json', 'api-key': box.apiKey },
        body: '{"collection":"actions","database":"Website","dataSource":"Cluster0"}',
      };
    }
    const topic = FIRMWARE_TOPICS[n % FIRMWARE_TOPICS.length];
    const stream = `${box.group}|${topic}`;
    const step = steps.get(stream) ?? 0;
    steps.set(stream, step + 1);
    const stamp = new Date(base - step * 1000 + offset).toISOString();
    const value = (20 + (n % 1000) / 100).toFixed(2);
    return {
      method: 'POST',
      path: `${BOX_PATH}/insertOne`,
      headers: { 'content-type': 'application/ejson', accept: 'application/json', 'api-key': box.apiKey },
      body:
        '{"collection":"datas","database":"Website","dataSource":"Cluster0","document":' +
        `{"topic":"${topic}","group":"${box.group}","value":"${value}","time":{"$date":"${stamp}"}}}`,
    };
  };
}

/** One request; resolves with its status. `agent: false` makes a new connection (and TLS handshake) each. */
function send(url, { method, path, headers, body }, agent) {
  const target = new URL(path, url);
  const requester = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const sent = requester(
      target,
      {
        method,
        agent,
        rejectUnauthorized: false,
        // The Arduino HTTPClient's own header; content-length as it sends it.
        headers: { ...headers, 'user-agent': 'ESP32HTTPClient', 'content-length': Buffer.byteLength(body) },
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
 * `concurrency` workers send the boxes' requests (from `requests`, see boxRequests) for `seconds` (or `count`
 * requests in all); the server's and this process's CPU over the run, the latencies, the load average after.
 */
async function drive(server, url, requests, { seconds, count, concurrency, agent }) {
  let next = 0;
  let failed = 0;
  let finds = 0;
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
      const request = requests(n);
      const sent = performance.now();
      try {
        const status = await send(url, request, agent);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status !== (request.path.endsWith('/find') ? 200 : 201)) failed += 1;
        else if (request.path.endsWith('/find')) finds += 1;
      } catch (error) {
        statuses.set(error.code ?? 'error', (statuses.get(error.code ?? 'error') ?? 0) + 1);
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
  const total = latencies.length;
  // A refused or failed request is a broken case, not a figure (the smoke run in CI fails on it).
  if (failed > 0)
    throw new Error(
      `boxes: ${failed} of ${total} requests to ${url} failed: ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  const at = (p) => round(latencies[Math.min(total - 1, Math.floor(p * total))] ?? 0, 1);
  const cpuSeconds = Math.max(serverCpuSeconds, 1e-6);
  return {
    requests: total,
    inserts: total - finds,
    finds,
    seconds: round(wallSeconds, 1),
    perSecond: round(total / wallSeconds, 0),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    serverCpu: round(serverCpuSeconds / wallSeconds),
    generatorCpu: round((user + system) / 1e6 / wallSeconds),
    perServerCpuSecond: round(total / cpuSeconds, 0),
    insertsPerServerCpuSecond: round((total - finds) / cpuSeconds, 0),
    findsPerServerCpuSecond: round(finds / cpuSeconds, 0),
    load: loadavg().map((value) => round(value)),
  };
}

/** Which side was the limit: the one that used (nearly) a whole core. */
function limit(run) {
  if (run.generatorCpu >= 0.9 && run.generatorCpu >= run.serverCpu) return 'generator';
  if (run.serverCpu >= 0.9) return 'server';
  return "neither (latency or the machine's other load)";
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * Hortus terminating TLS against the bare Node HTTPS server, a new connection per request, rounds taking
 * turns so that both meet the same machine: the ratio is the median of the rounds' ratios.
 */
async function tlsRounds(startServer, tlsDir, run, rounds) {
  // BENCH_BOXES_TLS_STORE=sqlite: the embedded store behind TLS (each insert then also commits to the file),
  // its file in the directory that holds the certificate (the server has one data directory).
  const store = process.env.BENCH_BOXES_TLS_STORE === 'sqlite' ? { BENCH_DATA_DIR: tlsDir } : {};
  const hortus = await startServer(
    'hortus',
    { BENCH_TLS_DIR: tlsDir, BENCH_BOXES: String(BOXES), ...store },
    { pin: false },
  );
  const bare = await startServer('https-bare', { BENCH_TLS_DIR: tlsDir }, { pin: false });
  try {
    const toHortus = boxRequests(hortus.boxes);
    const toBare = boxRequests(hortus.boxes);
    const pairs = [];
    for (let r = 0; r < rounds; r += 1) {
      const withHortus = await drive(hortus, hortus.httpsUrl, toHortus, {
        ...run,
        concurrency: 16,
        agent: false,
      });
      const withBare = await drive(bare, bare.url, toBare, { ...run, concurrency: 16, agent: false });
      pairs.push({
        hortus: withHortus,
        bare: withBare,
        ratio: round(withHortus.perSecond / Math.max(withBare.perSecond, 1)),
        // The rate ratio of the two were each given a whole core, whatever share of the loaded machine
        // each got in its round.
        cpuRatio: round(withHortus.perServerCpuSecond / Math.max(withBare.perServerCpuSecond, 1)),
      });
    }
    return pairs;
  } finally {
    await hortus.stop();
    await bare.stop();
  }
}

/** Hortus's box lane over TLS against bare Node HTTPS alone, on the memory store (bench/check.mjs). */
export async function boxesTlsRounds(startServer, run, rounds) {
  const tlsDir = await mkdtemp(join(tmpdir(), 'hortus-bench-tls-'));
  try {
    return await tlsRounds(startServer, tlsDir, run, rounds);
  } finally {
    await rm(tlsDir, { recursive: true, force: true });
  }
}

/**
 * @param {object} tools from run.mjs: startServer(kind, env), mongoServer(), dropDatabase(uri, name), log(text),
 *   smoke. BENCH_BOXES_SECONDS (5) is the length of a run, BENCH_BOXES_STORES (e.g. `memory,sqlite`) the
 *   keep-alive stores to measure.
 */
export async function boxesPart({ startServer, mongoServer, dropDatabase, log, smoke }) {
  const tlsDir = await mkdtemp(join(tmpdir(), 'hortus-bench-tls-'));
  const run = smoke ? { count: 40 } : { seconds: Number(process.env.BENCH_BOXES_SECONDS ?? 5) };
  const result = { load: loadavg().map((value) => round(value)), tls: undefined, keepAlive: [] };
  try {
    // 1. TLS, a new connection per request, on the memory store (BENCH_BOXES_TLS=off leaves it out;
    // BENCH_BOXES_TLS_STORE=sqlite puts the embedded store behind it).
    if (process.env.BENCH_BOXES_TLS !== 'off') {
      const pairs = await tlsRounds(startServer, tlsDir, run, smoke ? 1 : 3);
      const ratio = round(median(pairs.map((pair) => pair.ratio)));
      const cpuRatio = round(median(pairs.map((pair) => pair.cpuRatio)));
      const hortus = pairs.map((pair) => pair.hortus);
      // A box sends 13 requests per 20 s round: 0.65 per second.
      const perServerCpuSecond = median(hortus.map((figure) => figure.perServerCpuSecond));
      const boxesPerCore = Math.floor(perServerCpuSecond / 0.65);
      result.tls = {
        rounds: pairs,
        ratio,
        cpuRatio,
        perServerCpuSecond,
        boxesPerCore,
        limit: limit(pairs.at(-1).hortus),
      };
      for (const [index, pair] of pairs.entries())
        log(
          `  boxes TLS round ${index + 1}: Hortus ${pair.hortus.perSecond}/s (server CPU ${pair.hortus.serverCpu}, ` +
            `generator ${pair.hortus.generatorCpu}, p99 ${pair.hortus.p99Ms} ms) vs bare HTTPS ${pair.bare.perSecond}/s ` +
            `(server ${pair.bare.serverCpu}, generator ${pair.bare.generatorCpu}): ${pair.ratio}x; load ${pair.bare.load.join(' ')}`,
        );
      log(
        `  boxes TLS: ${ratio}x bare (per server CPU second ${cpuRatio}x), ${boxesPerCore} boxes per server core; limit: ${result.tls.limit}`,
      );
    }

    // 2. Keep-alive HTTP on each store.
    const mongo = smoke ? undefined : await mongoServer();
    const stores = [
      { name: 'memory', env: {} },
      { name: 'sqlite', env: { BENCH_DATA_DIR: await mkdtemp(join(tmpdir(), 'hortus-bench-boxes-')) } },
      ...(mongo === undefined
        ? []
        : [
            {
              name: `test MongoDB (${process.env.BENCH_MONGODB_KIND ?? mongo.kind})`,
              env: {
                BENCH_MONGODB_URI: mongo.uri,
                BENCH_MONGODB_DB: `bench_boxes_${Date.now()}`,
                // The test MongoDB writes one at a time: 64 waiting inserts outlast the default deadline.
                BENCH_MONGODB_TIMEOUT_MS: '30000',
              },
              concurrency: 16,
            },
          ]),
    ];
    const only = process.env.BENCH_BOXES_STORES?.split(',');
    for (const { name, env, concurrency = 64 } of stores) {
      if (only !== undefined && !only.some((wanted) => name.startsWith(wanted))) continue;
      const server = await startServer('hortus', { ...env, BENCH_BOXES: String(BOXES) }, { pin: false });
      const agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
      // A store that cannot keep up (the test MongoDB on a loaded machine answers 503 at its deadline) is a
      // row with its error, not the end of the bench; the smoke run still fails on it.
      const requests = boxRequests(server.boxes);
      const figures = await drive(server, server.url, requests, { ...run, concurrency, agent }).catch(
        (error) => {
          if (smoke) throw error;
          return { error: String(error?.message ?? error) };
        },
      );
      agent.destroy();
      await server.stop();
      if (env.BENCH_DATA_DIR !== undefined) await rm(env.BENCH_DATA_DIR, { recursive: true, force: true });
      if (env.BENCH_MONGODB_DB !== undefined) await dropDatabase(mongo.uri, env.BENCH_MONGODB_DB);
      if (figures.error !== undefined) {
        result.keepAlive.push({ store: name, error: figures.error });
        log(`  boxes keep-alive ${name}: ${figures.error}`);
        continue;
      }
      result.keepAlive.push({ store: name, concurrency, ...figures, limit: limit(figures) });
      log(
        `  boxes keep-alive ${name}: ${figures.perSecond}/s, ${figures.insertsPerServerCpuSecond} inserts + ` +
          `${figures.findsPerServerCpuSecond} finds per server CPU second, p50 ${figures.p50Ms} ms, p99 ` +
          `${figures.p99Ms} ms, server CPU ${figures.serverCpu}, generator ${figures.generatorCpu}; limit: ` +
          `${limit(figures)}; load ${figures.load.join(' ')}`,
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
  lines.push(
    `The firmware's own requests (COMPAT "Boxes") from ${BOXES} registered boxes, each with its own api-key, to ` +
      `the box endpoint: insertOne in application/ejson with a Berlin wall-clock $date, and every 13th a find on ` +
      `actions. Load average when the part started: ${boxes.load.join(', ')}.`,
    '',
  );
  if (boxes.tls !== undefined) {
    const { rounds, ratio, cpuRatio, perServerCpuSecond, boxesPerCore, limit: side } = boxes.tls;
    lines.push(
      `| TLS, new connection per request (${process.env.BENCH_BOXES_TLS_STORE === 'sqlite' ? 'SQLite' : 'memory'} store), 16 at a time | req/s | p50 / p99 ms | server CPU | generator CPU | load average after |`,
      '|---|---|---|---|---|---|',
      ...rounds.flatMap(({ hortus, bare }, index) => [
        `| round ${index + 1}: Hortus terminating TLS | ${hortus.perSecond} | ${hortus.p50Ms} / ${hortus.p99Ms} | ${hortus.serverCpu} | ${hortus.generatorCpu} | ${hortus.load.join(' ')} |`,
        `| round ${index + 1}: bare Node HTTPS, same answers | ${bare.perSecond} | ${bare.p50Ms} / ${bare.p99Ms} | ${bare.serverCpu} | ${bare.generatorCpu} | ${bare.load.join(' ')} |`,
      ]),
      '',
      `Hortus / bare: ${ratio}x in requests per second, ${cpuRatio}x in requests per server CPU second, ` +
        `medians of the rounds (goal >= 0.8). ${boxesPerCore} boxes per server core ` +
        `(${perServerCpuSecond} requests per server CPU second / 0.65 per box). Limit: ${side}.`,
      '',
    );
  }
  lines.push(
    '| keep-alive HTTP, 12 inserts : 1 find | at a time | req/s | inserts per server CPU s | finds per server CPU s | p50 / p99 ms | server CPU | generator CPU | limit | load average after |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...boxes.keepAlive.map((row) =>
      row.error !== undefined
        ? `| ${row.store} | | failed: ${row.error} | | | | | | | |`
        : `| ${row.store} | ${row.concurrency} | ${row.perSecond} | ${row.insertsPerServerCpuSecond} | ${row.findsPerServerCpuSecond} | ` +
          `${row.p50Ms} / ${row.p99Ms} | ${row.serverCpu} | ${row.generatorCpu} | ${row.limit} | ${row.load.join(' ')} |`,
    ),
    '',
    'Goal per server core: 3,250 single-reading inserts + 250 finds per second (5,000 boxes).',
  );
  return lines;
}

/** The boxes part's rows of the targets table (issue 22 item 6). */
export function boxesTargets(boxes) {
  if (boxes === undefined) return [];
  const rows = [];
  if (boxes.tls !== undefined) {
    const { ratio, cpuRatio, boxesPerCore } = boxes.tls;
    rows.push({
      name: 'Boxes: Hortus terminating TLS vs bare Node HTTPS, new connection per request',
      goal: '>= 0.8 x',
      measured: `${ratio} x req/s, ${cpuRatio} x per server CPU s (${boxesPerCore} boxes per core)`,
      met: ratio >= 0.8,
    });
  }
  for (const row of boxes.keepAlive) {
    rows.push({
      name: `Boxes over keep-alive HTTP, ${row.store}, per server core`,
      goal: '>= 3,250 inserts + 250 finds /s, p99 < 100 ms',
      measured:
        row.error === undefined
          ? `${row.insertsPerServerCpuSecond} + ${row.findsPerServerCpuSecond}, p99 ${row.p99Ms} ms`
          : row.error,
      met:
        row.error === undefined &&
        row.insertsPerServerCpuSecond >= 3250 &&
        row.findsPerServerCpuSecond >= 250 &&
        row.p99Ms < 100,
    });
  }
  return rows;
}
