// The `capacity` part of `pnpm bench`: how many polling web clients one server process serves, on each
// store, in steps of growing client counts; the clients are simulated by bench/capacity.mjs.
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, URL } from 'node:url';
import { benchMongoBackends, benchMongoServer } from './ferretdb.mjs';
import { children, log, round } from './harness.mjs';

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
async function startGenerator(bench, server, { boxes = true } = {}) {
  const { plan, pinning, tasksetPath, stopChild } = bench;
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
async function capacityOfStore(
  bench,
  name,
  env,
  stepsOfStore = bench.plan.capacitySteps,
  { boxes = true } = {},
) {
  const { startServer, smoke } = bench;
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
  const generator = await startGenerator(bench, server, { boxes });
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
async function mongoCapacity(bench, mongo) {
  const { plan, dropDatabase } = bench;
  const database = `hortus_bench_${randomBytes(4).toString('hex')}`;
  // Each step's groups are added through a connection with a deadline of its own (bench/server.mjs).
  const seeding = { BENCH_SEED_MONGODB_TIMEOUT_MS: '120000' };
  try {
    const figures = await capacityOfStore(
      bench,
      'test MongoDB',
      { BENCH_MONGODB_URI: mongo.uri, BENCH_MONGODB_DB: database, ...seeding },
      plan.mongoCapacitySteps,
    );
    // FerretDB's writes (each reading batch updates the rollups, a scan of the collection on FerretDB v1)
    // end the steps above long before the polling does: the same steps without boxes show the server's side.
    const pollingOnly = await capacityOfStore(
      bench,
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
export async function capacityPart(bench) {
  const { plan, pinning, root } = bench;
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
    if (capacityStores.has('memory')) results.stores.push(await capacityOfStore(bench, 'memory store', {}));
    if (capacityStores.has('sqlite')) {
      const dir = await mkdtemp(join(tmpdir(), 'hortus-bench-capacity-'));
      dirs.push(dir);
      results.stores.push(await capacityOfStore(bench, 'SQLite', { BENCH_DATA_DIR: dir }));
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
      results.stores.push(...(await mongoCapacity(bench, mongo)));
    }
    return results;
  } finally {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

export function capacityTargets(capacity) {
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  for (const figure of capacity?.stores ?? []) {
    const goal = figure.store.startsWith('test MongoDB') ? 5000 : 10_000;
    const failed = figure.steps.find((row) => row.p99Ms >= CAPACITY_P99_MS || row.errors > 0);
    const why =
      failed !== undefined
        ? ` (${failed.clients.toLocaleString('en')}: p99 ${failed.p99Ms} ms, ${failed.errors} errors)`
        : figure.stopped !== undefined
          ? ` (then ${figure.stopped})`
          : ' (the largest step; not looked further)';
    add(
      `Capacity, ${figure.store}${figure.server === undefined ? '' : ` (${figure.server})`}: web clients polling every ${capacity.periodMs / 1000} s, ` +
        `p99 < ${CAPACITY_P99_MS} ms and no errors`,
      `>= ${goal.toLocaleString('en')} clients`,
      `${figure.capacity.toLocaleString('en')}${why}`,
      figure.capacity >= goal,
    );
  }
  return list;
}

export function capacityMarkdown(capacity) {
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
