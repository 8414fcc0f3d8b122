#!/usr/bin/env node
// Soak: `hortus serve --demo` on MongoDB (the FerretDB test server unless MONGODB_URI is set) under a mix
// of polling reads, toggles, chart edits and reading batches from N connections for D seconds, run
// several times in a row. Prints requests, errors, throughput, p50/p99 and the server's heap after a GC
// at the end of each run; exits 1 on any error or when the heap keeps growing from run to run.
//
//   node scripts/soak.mjs [--duration 60] [--connections 50] [--runs 2] [--max-heap-growth-mb 16]
//                         [--store mongodb|memory]
//
// `--store memory` measures the server alone. Its readings live in the heap, so there every run sends the
// same readings again (accepted, not stored twice) and the heap check still means "no leak".
//
// Build first (`pnpm build`): the server is packages/cli/dist/src/main.js.
import { Buffer } from 'node:buffer';
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const cliMain = fileURLToPath(new URL('../packages/cli/dist/src/main.js', import.meta.url));

// ---- load mode -------------------------------------------------------------------------------------

async function soak() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      connections: { type: 'string', default: '50' },
      runs: { type: 'string', default: '2' },
      'max-heap-growth-mb': { type: 'string', default: '16' },
      store: { type: 'string', default: 'mongodb' },
    },
  });
  const durationMs = Number(values.duration) * 1000;
  const connections = Number(values.connections);
  const runs = Number(values.runs);
  const maxGrowthBytes = Number(values['max-heap-growth-mb']) * 1024 * 1024;
  if (![durationMs, connections, runs, maxGrowthBytes].every((n) => Number.isFinite(n) && n > 0)) {
    throw new Error('--duration, --connections, --runs and --max-heap-growth-mb take positive numbers');
  }

  const memory = values.store === 'memory';
  if (!memory && values.store !== 'mongodb') throw new Error('--store is mongodb or memory');
  const database = memory ? { uri: undefined, stop: () => {} } : startDatabase();
  const dbName = `hortus_soak_${randomBytes(4).toString('hex')}`;
  const server = await startServer(database.uri, dbName);
  let failed = false;
  try {
    const heaps = [];
    for (let run = 1; run <= runs; run += 1) {
      const result = await loadRun(server.url, memory ? 1 : run, durationMs, connections);
      // Let the server finish what it queued (automation ticks, sockets) before measuring.
      await sleep(1000);
      const heap = await server.heap();
      heaps.push(heap.heapUsed);
      report(run, result, heap, durationMs, connections);
      if (result.errors > 0) failed = true;
    }
    const growth = heaps.at(-1) - heaps[0];
    const verdict = growth <= maxGrowthBytes ? 'ok' : 'GROWING';
    console.log(
      `soak: heap after each run ${heaps.map(mb).join(' -> ')} MB; growth ${mb(growth)} MB (limit ${mb(maxGrowthBytes)} MB): ${verdict}`,
    );
    if (verdict !== 'ok') failed = true;
    const serverErrors = server.errorLines();
    if (serverErrors.length > 0) {
      const causes = new Map();
      for (const line of serverErrors) {
        const { level, error, cause: because } = JSON.parse(line);
        const cause = `${level}: ${String(because ?? error ?? line).slice(-160)}`;
        causes.set(cause, (causes.get(cause) ?? 0) + 1);
      }
      console.log(`soak: the server logged ${serverErrors.length} failed requests or errors:`);
      for (const [cause, count] of causes) console.log(`  ${count} x ${cause}`);
      failed = true;
    }
  } finally {
    await server.stop();
    if (database.uri !== undefined) await dropDatabase(database.uri, dbName);
    database.stop();
  }
  console.log(failed ? 'soak: FAILED' : 'soak: passed');
  process.exitCode = failed ? 1 : 0;
}

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(1);

function report(run, result, heap, durationMs, connections) {
  const latencies = result.latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const kinds = Object.entries(result.byKind)
    .map(([kind, { count, latencies: own }]) => {
      own.sort((a, b) => a - b);
      return `${kind} ${count} (p99 ${(own[Math.floor(0.99 * own.length)] ?? 0).toFixed(1)} ms)`;
    })
    .join(', ');
  console.log(
    `soak run ${run}: ${durationMs / 1000} s x ${connections} connections: ${result.requests} requests, ` +
      `${result.errors} errors, ${(result.requests / (durationMs / 1000)).toFixed(0)} req/s, ` +
      `p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${at(1).toFixed(1)} ms; ` +
      `readings stored ${result.readingsStored}; server heap after GC ${mb(heap.heapUsed)} MB (rss ${mb(heap.rss)} MB)`,
  );
  console.log(`  by kind: ${kinds}`);
  for (const sample of result.errorSamples) console.log(`  error: ${sample}`);
}

/** The test server of scripts/ferretdb.sh, unless MONGODB_URI names one; stopped at the end if started here. */
function startDatabase() {
  const given = process.env.MONGODB_URI?.trim();
  if (given) return { uri: given, stop: () => {} };
  const run = (command) =>
    execFileSync('bash', ['scripts/ferretdb.sh', command], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  let startedHere = false;
  let output;
  try {
    output = run('status');
  } catch {
    output = run('start');
    startedHere = true;
  }
  const uri = /^MONGODB_URI=(.+)$/mu.exec(output)?.[1]?.trim();
  if (!uri) throw new Error(`scripts/ferretdb.sh printed no MONGODB_URI: ${output}`);
  return { uri, stop: () => startedHere && run('stop') };
}

/** The soak's database goes when it is done, so repeated soaks do not fill the test server. */
async function dropDatabase(uri, dbName) {
  // The driver is a dependency of the Mongo adapter, not of the workspace root.
  const require = createRequire(new URL('../packages/adapter-mongo/package.json', import.meta.url));
  const { MongoClient } = require('mongodb');
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
}

async function startServer(uri, dbName) {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], {
    cwd: root,
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: {
      ...process.env,
      ...(uri === undefined ? { STORE: 'memory', MONGODB_URI: '' } : { STORE: 'mongodb', MONGODB_URI: uri }),
      MONGODB_DB: dbName,
      // The test FerretDB on a two-core box sometimes takes seconds per answer; the soak looks for failed
      // requests and leaks, and reports latency rather than turning slow answers into 503s.
      MONGODB_TIMEOUT_MS: '15000',
      HOST: '127.0.0.1',
      // Every connection comes from one address here; the limit would turn the soak into a 429 test.
      RATE_LIMIT_PER_MINUTE: '0',
      AUTOMATIONS: 'on',
      AUTOMATION_TICK_MS: '1000',
    },
  });
  const errorLines = [];
  let url;
  let buffered = '';
  const listening = new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the server exited with ${code} before listening`)));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        // Failed requests: errors (bugs) and warnings (the store away or busy, answered 503).
        if (line.includes('"level":"error"') || line.includes('"event":"request failed"'))
          errorLines.push(line);
        if (url === undefined && line.includes('"event":"listening"')) {
          url = JSON.parse(line).url;
          resolve();
        }
      }
    });
  });
  await listening;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    errorLines: () => errorLines,
    heap: () =>
      new Promise((resolve) => {
        child.once('message', (message) => resolve(message.heap));
        child.send('heap');
      }),
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`the server exited with ${code} after SIGTERM`);
    },
  };
}

const objects = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'];
const datasets = ['temperature', 'humidity', 'lux', 'moisture_1'];

async function loadRun(url, run, durationMs, connections) {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const result = { requests: 0, errors: 0, latencies: [], byKind: {}, errorSamples: [], readingsStored: 0 };
  const send = (kind, method, path, body, expected) =>
    new Promise((resolve) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const started = performance.now();
      const fail = (what) => {
        result.errors += 1;
        if (result.errorSamples.length < 5) result.errorSamples.push(`${kind} ${method} ${path}: ${what}`);
        resolve(undefined);
      };
      const outgoing = request(
        {
          host: target.hostname,
          port: target.port,
          method,
          path,
          agent,
          headers:
            text === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
        },
        (response) => {
          let answer = '';
          response.setEncoding('utf8').on('data', (chunk) => (answer += chunk));
          response.on('end', () => {
            const ms = performance.now() - started;
            result.requests += 1;
            result.latencies.push(ms);
            const own = (result.byKind[kind] ??= { count: 0, latencies: [] });
            own.count += 1;
            own.latencies.push(ms);
            if (response.statusCode !== expected)
              return fail(`${response.statusCode} ${answer.slice(0, 200)}`);
            resolve(answer);
          });
        },
      );
      outgoing.on('error', (error) => fail(error.message));
      outgoing.end(text);
    });

  // Each connection edits a chart of its own user, and sends readings of its own box.
  const users = Array.from({ length: connections }, (_, index) => `soak-user-${index}`);
  await Promise.all(
    users.map((user) =>
      send(
        'setup',
        'POST',
        `/api/historyChart/update/${user}`,
        { chartName: 'soak', chartData: { type: 'line', datasets: [{}] } },
        200,
      ),
    ),
  );
  result.requests = 0;
  result.latencies = [];
  result.byKind = {};

  const deadline = performance.now() + durationMs;
  const connection = async (index) => {
    const user = users[index];
    const group = `soak-box-${index % 10}`;
    for (let turn = 0; performance.now() < deadline; turn += 1) {
      const pick = (turn * 7 + index) % 20;
      if (pick < 8) {
        const polls = [
          '/api/data/latestdata/All?groupId=demo',
          '/api/actions/current_state?group=demo',
          '/api/data/All/temperature?groupId=demo&count=100',
          '/api/notification/latestdata/notifications?groupId=demo',
        ];
        await send('poll', 'GET', polls[(turn + index) % polls.length], undefined, 200);
      } else if (pick < 12) {
        const object = objects[(turn + index) % objects.length];
        await send(
          'toggle',
          'GET',
          `/api/actions/?group=demo&object=${object}&value=${turn % 2 ? 'on' : 'off'}`,
          undefined,
          200,
        );
      } else if (pick < 15) {
        const edits = [
          ['PUT', `/api/historyChart/change_type/${user}/soak`, { type: turn % 2 ? 'line' : 'scatter' }],
          ['PUT', `/api/historyChart/change_max_count/${user}/soak`, { max_count: 100 + (turn % 50) }],
          [
            'PUT',
            `/api/historyChart/change_datasets/${user}/soak/${datasets[turn % datasets.length]}`,
            { checked: turn % 3 === 0 },
          ],
          ['GET', `/api/historyChart/all/${user}`, undefined],
        ];
        const [method, path, body] = edits[turn % edits.length];
        await send('chart', method, path, body, 200);
      } else {
        // Unique times per run, connection and turn: every batch stores new readings. All of them lie in the
        // past (2015 to about 2022): readings ahead of the server's clock are refused.
        const base = Date.UTC(2015, 0, 1) + ((run * 100 + index) * 100_000 + turn) * 10_000;
        const readings = Array.from({ length: 10 }, (_, offset) => ({
          group,
          topic: offset % 2 ? 'esp/air/temperature' : 'esp/air/humidity',
          value: 20 + offset,
          time: new Date(base + offset * 1000).toISOString(),
        }));
        const answer = await send('ingest', 'POST', '/api/data/readings', readings, 202);
        if (answer !== undefined) result.readingsStored += JSON.parse(answer).stored;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, index) => connection(index)));
  agent.destroy();
  return result;
}

// ---- server mode: `hortus serve` in this process, reporting its heap over IPC -------------------------

if (process.argv[2] === '--server') {
  process.on('message', (message) => {
    if (message !== 'heap') return;
    globalThis.gc?.();
    process.send?.({ heap: process.memoryUsage() });
  });
  // The IPC channel must not keep the process alive once `serve` has shut down.
  process.channel?.unref();
  process.argv = [process.argv[0], cliMain, 'serve', '--demo', '--port', '0'];
  await import(pathToFileURL(cliMain).href);
} else {
  await soak();
}
