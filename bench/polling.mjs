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

export async function pollingPart(bench) {
  const { plan, load, loadWithWrk, startServer, get, wrkPath, pinning } = bench;
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

export function pollingTargets(polling) {
  const list = [];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  if (polling !== undefined) {
    const { rows } = polling;
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
  return lines;
}
