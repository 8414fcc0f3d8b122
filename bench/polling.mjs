// The `polling` part of `pnpm bench`: the three polled routes, full answers and 304s, against a node:http
// hello, a Koa + router hello and a middleware-free Koa serving the same routes, each server in a process
// of its own; requests per second and the server's CPU per request, as same-round ratios.
import { answered304, log, median, round } from './harness.mjs';

export const pollingRoutes = [
  { route: 'current_state', path: '/api/actions/current_state?group=demo' },
  { route: 'latestdata/All', path: '/api/data/latestdata/All?groupId=demo' },
  { route: 'group/abo', path: '/api/group/abo?group=demo' },
];
/** Polled by every web client too; it has an ETag since issue 26 (not in the bare Koa case). */
export const notificationsRoute = {
  route: 'notifications',
  path: '/api/notification/latestdata/notifications?groupId=demo',
};

/** The ETag of a route's answer now (each round asks again: the automation engine may change a revision). */
export async function tagOf({ get }, path, server) {
  const reply = await get(server.url, path);
  if (reply.status !== 200 || typeof reply.headers.etag !== 'string') {
    throw new Error(`GET ${path} answered ${reply.status} without an ETag`);
  }
  return reply.headers.etag;
}

/**
 * Runs every case (`{ name, server, path, expect, conditional }`) for `seconds`, `rounds` times in turn after
 * one warm-up run each (when `warmupSeconds` is given), checking each answered as expected; answers each
 * case's runs (req/s, server CPU microseconds per request) by name, and the generators used.
 */
export async function pollRounds(bench, cases, { rounds, seconds, warmupSeconds }) {
  const { load } = bench;
  const headersOf = async (one) =>
    one.conditional ? { 'if-none-match': await tagOf(bench, one.path, one.server) } : {};
  for (const one of warmupSeconds === undefined ? [] : cases) {
    await load(one.server.url, one.path, warmupSeconds, await headersOf(one));
  }
  const runs = new Map(cases.map((one) => [one.name, []]));
  const generators = new Set();
  for (let r = 0; r < rounds; r += 1) {
    // Each round visits every case; starting one case later each round spreads the machine's drift.
    const order = cases.map((_, i) => cases[(i + r) % cases.length]);
    for (const one of order) {
      // A revision may change during a 304 run (the demo's engine switches once, about 10 s after start): its
      // polls then answer 200 for a while. That run says nothing of a 304's cost; it is run again on the new
      // tag, at most twice, so the bench does not fail by chance.
      for (let attempt = 1; ; attempt += 1) {
        const headers = await headersOf(one);
        const answeredBefore = one.conditional ? await answered304(one.server) : 0;
        const cpuBefore = await one.server.cpu();
        const result = await load(one.server.url, one.path, seconds, headers);
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
        if (result.errors === 0 && expected >= 0.95 * result.total) {
          runs.get(one.name).push(result);
          break;
        }
        const failure = `${one.name}: expected ${one.expect}, got ${JSON.stringify(result.statuses)}, ${result.errors} errors`;
        if (!one.conditional || result.errors > 0 || attempt === 3) throw new Error(failure);
        log(`  ${failure}; its revision changed during the run, so it runs again on the new tag`);
      }
    }
    log(`  round ${r + 1}/${rounds} done`);
  }
  return { runs, generators };
}

/**
 * Same-round ratios of two cases' runs, then their median (both figures of a pair saw the same machine
 * state): of requests per second, and of CPU per request turned the same way (the reference's CPU per
 * request over the case's: above 1 when the case costs less).
 */
export function ratios(runs, name, reference) {
  const of = runs.get(name);
  const to = runs.get(reference);
  return {
    rps: round(median(of.map((result, i) => result.rps / to[i].rps))),
    cpu: round(median(of.map((result, i) => to[i].cpuPerRequest / result.cpuPerRequest))),
  };
}

export async function pollingPart(bench) {
  const { plan, loadWithWrk, startServer, wrkPath, pinning } = bench;
  log(
    `polling throughput: ${wrkPath !== undefined && plan.requests === undefined ? `wrk (${wrkPath})` : 'autocannon'}` +
      `${pinning && plan.requests === undefined ? ', servers pinned to core 0 and wrk to core 1' : ''}`,
  );
  log('polling throughput: starting servers');
  // BENCH_REDIS_URL adds a server counting its rate limit in that Redis (RATE_LIMIT_REDIS_URL), polled in
  // the same rounds as the one counting per process: what the shared limit costs per request.
  const redisUrl = process.env.BENCH_REDIS_URL;
  const [httpHello, koaHello, koaRoutes, real, uncached, redisLimited] = await Promise.all([
    startServer('http-hello'),
    startServer('koa-hello'),
    startServer('koa-routes'),
    startServer('hortus', { BENCH_DEMO: 'on' }),
    // Its answer cache keeps nothing: every full answer is built and serialised, as bare Koa's are.
    startServer('hortus', { BENCH_DEMO: 'on', BENCH_ANSWER_CACHE: 'off' }),
    redisUrl === undefined
      ? undefined
      : startServer('hortus', { BENCH_DEMO: 'on', BENCH_RATE_LIMIT_REDIS_URL: redisUrl }),
  ]);
  const servers = [httpHello, koaHello, koaRoutes, real, uncached, redisLimited].filter(Boolean);
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
      name: `Hortus ${route}, cache missed`,
      server: uncached,
      path,
      expect: 200,
    })),
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
  const { runs, generators } = await pollRounds(bench, cases, plan);
  // The smoke run drives its cases with autocannon (counts of requests); one second of wrk keeps that path alive.
  if (plan.requests !== undefined && wrkPath !== undefined) {
    const one = cases.at(-1);
    const before = await answered304(one.server);
    const result = await loadWithWrk(one.server.url, one.path, 1, {
      'if-none-match': await tagOf(bench, one.path, one.server),
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

  const rows = cases.map((one) => {
    const rps = runs.get(one.name).map((result) => result.rps);
    const route = pollingRoutes.find(
      ({ route: name }) => one.name === `Hortus ${name}` || one.name === `Hortus ${name}, cache missed`,
    )?.route;
    const toKoaHello = ratios(runs, one.name, 'Koa + router hello');
    const toNodeHttp = ratios(runs, one.name, 'node:http hello');
    const toBareKoaRoute = route === undefined ? undefined : ratios(runs, one.name, `bare Koa ${route}`);
    return {
      case: one.name,
      status: one.expect,
      medianRps: Math.round(median(rps)),
      rps: rps.map(Math.round),
      toKoaHello: toKoaHello.rps,
      toNodeHttp: toNodeHttp.rps,
      cpuToKoaHello: toKoaHello.cpu,
      cpuToNodeHttp: toNodeHttp.cpu,
      // A full answer against Koa with no middleware serving the same route from the same store.
      ...(toBareKoaRoute === undefined
        ? {}
        : { toBareKoaRoute: toBareKoaRoute.rps, cpuToBareKoaRoute: toBareKoaRoute.cpu }),
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

/** The goals of issue 38, in server CPU per request (the figure a loaded machine disturbs least). */
export const POLL_304_GOAL_TO_NODE_HTTP = 0.75;
export const POLL_304_GOAL_TO_KOA_HELLO = 0.85;
export const FULL_ANSWER_GOAL_TO_BARE_KOA = 1;

export function pollingTargets(polling) {
  if (polling === undefined) return [];
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  const { rows } = polling;
  const row = (name) => rows.find((one) => one.case === name);
  const koaHello = row('Koa + router hello');
  const nodeHttp = row('node:http hello');
  for (const { route } of pollingRoutes) {
    for (const [name, label] of [
      [`Hortus ${route}`, 'cache hit'],
      [`Hortus ${route}, cache missed`, 'cache missed'],
    ]) {
      const full = row(name);
      add(
        `Polling ${route}, full answer (${label}), memory store, server CPU per request`,
        `>= ${FULL_ANSWER_GOAL_TO_BARE_KOA} x bare Koa, same route and store`,
        `${full.cpuToBareKoaRoute} x (${full.cpuMicrosPerRequest} vs ${row(`bare Koa ${route}`).cpuMicrosPerRequest} us; ` +
          `req/s ${full.toBareKoaRoute} x)`,
        full.cpuToBareKoaRoute >= FULL_ANSWER_GOAL_TO_BARE_KOA,
      );
    }
    const cached = row(`Hortus ${route} 304`);
    add(
      `Polling ${route}, 304, memory store, server CPU per request`,
      `>= ${POLL_304_GOAL_TO_NODE_HTTP} x node:http hello`,
      `${cached.cpuToNodeHttp} x (${cached.cpuMicrosPerRequest} vs ${nodeHttp.cpuMicrosPerRequest} us; req/s ${cached.toNodeHttp} x)`,
      cached.cpuToNodeHttp >= POLL_304_GOAL_TO_NODE_HTTP,
    );
    add(
      `Polling ${route}, 304, memory store, server CPU per request`,
      `>= ${POLL_304_GOAL_TO_KOA_HELLO} x Koa + router hello`,
      `${cached.cpuToKoaHello} x (${cached.cpuMicrosPerRequest} vs ${koaHello.cpuMicrosPerRequest} us; req/s ${cached.toKoaHello} x)`,
      cached.cpuToKoaHello >= POLL_304_GOAL_TO_KOA_HELLO,
    );
  }
  return list;
}

export function pollingMarkdown(polling) {
  const lines = [];
  if (polling !== undefined) {
    const { generator, pinned, connections, secondsPerRun, rounds, rows } = polling;
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
        "process spent per request, median over the rounds; its ratios are the other case's CPU per request " +
        'over this one\'s (above 1: cheaper). "Cache missed": a server whose answer cache keeps nothing, so ' +
        'every full answer is built and serialised.',
      '',
      '| Case | Status | Median req/s | x Koa hello | x node:http | x bare Koa, same route | Server CPU per request | CPU x Koa hello | CPU x node:http | CPU x bare Koa, same route |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map(
        (row) =>
          `| ${row.case} | ${row.status} | ${row.medianRps.toLocaleString('en')} | ${row.toKoaHello} | ` +
          `${row.toNodeHttp} | ${row.toBareKoaRoute ?? ''} | ${row.cpuMicrosPerRequest} us | ` +
          `${row.cpuToKoaHello} | ${row.cpuToNodeHttp} | ${row.cpuToBareKoaRoute ?? ''} |`,
      ),
    );
  }
  return lines;
}
