import { spawn, spawnSync } from 'node:child_process';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { createClient } from '@redis/client';
import { CapturingLogger, isListening, TcpRelay } from '@hortus/test-support';
import { HTTP_METRICS, type HttpMetrics, SHARED_RATE_LIMIT, type SharedRateLimit } from '@hortus/http-koa';
import { RedisRateLimit } from '@hortus/http-koa/shared-rate-limit';
import { type AppOnMemory, expect, startAppOnMemory } from './harness.js';

/** The Redis the tests count in; CI starts one on this port (.ci/run). */
const REDIS_PORT = Number(process.env['HORTUS_TEST_REDIS_PORT'] ?? '6379');
const REDIS_URL = `redis://127.0.0.1:${REDIS_PORT}`;
/** A polled route (the poll lane answers it) and one only Koa answers. */
const POLLED = '/api/actions/current_state?group=greenhouse';
const VIA_KOA = '/healthz';

let run = 0;
/** A key prefix of its own per test: as the installation id does, it keeps counts apart. */
function newPrefix(): string {
  run += 1;
  return `hortus:test-${process.pid}-${Date.now()}-${run}:requests`;
}

interface Limited {
  readonly app: AppOnMemory;
  readonly limit: RedisRateLimit;
  readonly logger: CapturingLogger;
}

/** A server of the installation: its own Redis client, counting under `keyPrefix`. */
async function serverCountingIn(url: string, perMinute: number, keyPrefix: string): Promise<Limited> {
  const logger = new CapturingLogger();
  const limit = new RedisRateLimit({ url, perMinute, keyPrefix, logger });
  await limit.start(1000);
  const app = await startAppOnMemory({ RATE_LIMIT_PER_MINUTE: String(perMinute) }, (container) => {
    container.bind<SharedRateLimit>(SHARED_RATE_LIMIT).toConstantValue(limit);
  });
  return { app, limit, logger };
}

async function get(server: Limited, path: string): Promise<Response> {
  const response = await fetch(`${server.app.url}${path}`);
  await response.text();
  return response;
}

/** How many answers the server's poll lane wrote (the rest went through Koa). */
function laneAnswers(server: Limited): number {
  const text = server.app.container.get<HttpMetrics>(HTTP_METRICS).render();
  return Number(/^hortus_poll_lane_answers_total (\d+)$/mu.exec(text)?.[1]);
}

function outages(logger: CapturingLogger): number {
  return logger.lines.filter((line) => line.event === 'rate limit redis unavailable, limiting per process')
    .length;
}

function recoveries(logger: CapturingLogger): number {
  return logger.lines.filter((line) => line.event === 'rate limit redis available, limit shared again')
    .length;
}

/** The shared limit's series as /metrics renders them (read directly: /metrics is rate-limited too). */
function sharedSeries(server: Limited): Record<string, number> {
  const text = server.app.container.get<HttpMetrics>(HTTP_METRICS).render();
  const series: Record<string, number> = {};
  for (const [, name, value] of text.matchAll(/^(hortus_rate_limit_[\w{}="]+) (\d+)$/gmu)) {
    series[name ?? ''] = Number(value);
  }
  return series;
}

/** Resolves once `check` holds, polling; the wait is bounded so a failure names what never happened. */
async function until(check: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > 10_000) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A request through each door of the server (poll lane, Koa chain, /healthz, box lane): status and time. */
async function throughEachDoor(server: Limited): Promise<{ door: string; status: number; ms: number }[]> {
  const doors: [string, RequestInit & { path: string }][] = [
    ['poll lane', { path: POLLED }],
    ['koa chain', { path: '/api/data/latestdata/All?groupId=greenhouse' }],
    ['healthz', { path: VIA_KOA }],
    [
      'box lane',
      {
        path: '/api/box/v1/action/find',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': 'not-a-box' },
        body: '{}',
      },
    ],
  ];
  const seen = [];
  for (const [door, { path, ...init }] of doors) {
    const started = performance.now();
    const response = await fetch(`${server.app.url}${path}`, init);
    await response.text();
    seen.push({ door, status: response.status, ms: performance.now() - started });
  }
  return seen;
}

/** A redis-server of this test alone on a free port, to stop with SIGSTOP (never the shared one). */
async function ownRedis(): Promise<{ port: number; pid: number; stop: () => void }> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  // SIGKILL ends a stopped process too; also at exit, should a test time out before its cleanup.
  const stop = (): void => {
    redis.kill('SIGKILL');
  };
  process.once('exit', stop);
  const started = performance.now();
  while (!(await isListening(port))) {
    if (performance.now() - started > 10_000 || redis.exitCode !== null) {
      stop();
      throw new Error(`redis-server did not listen on ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { port, pid: redis.pid ?? 0, stop };
}

const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
const redisUp = await isListening(REDIS_PORT);

describe(
  redisUp
    ? 'the request limit shared in Redis (RATE_LIMIT_REDIS_URL)'
    : `the request limit shared in Redis (skipped: no Redis answers on 127.0.0.1:${REDIS_PORT}; .ci/run starts one)`,
  function () {
    this.timeout(30_000);
    const servers: Limited[] = [];
    const redis = createClient({ url: REDIS_URL });

    before(async function () {
      if (!redisUp) this.skip();
      await redis.connect();
    });

    after(() => {
      if (redis.isOpen) redis.destroy();
    });

    afterEach(async () => {
      for (const server of servers.splice(0)) {
        server.limit.close();
        await server.app.close();
      }
    });

    const start = async (url: string, perMinute: number, keyPrefix: string): Promise<Limited> => {
      const server = await serverCountingIn(url, perMinute, keyPrefix);
      servers.push(server);
      return server;
    };

    it('when requests are split across two servers, then they share one allowance: the next is 429 with Retry-After on either, and each request counted once', async () => {
      const prefix = newPrefix();
      const one = await start(REDIS_URL, 6, prefix);
      const two = await start(REDIS_URL, 6, prefix);
      const counted = async (): Promise<number> => Number(await redis.get(`${prefix}:127.0.0.1`));

      // A server's first poll goes through Koa (access is not known yet); later ones are the lane's.
      const allowed = [
        await get(one, POLLED),
        await get(two, POLLED),
        await get(one, POLLED),
        await get(two, POLLED),
        await get(one, VIA_KOA),
        await get(two, POLLED),
      ];
      expect(allowed.map((response) => response.status)).to.not.include(429);
      expect([laneAnswers(one), laneAnswers(two)]).to.deep.equal([1, 2]);
      expect(await counted()).to.equal(6);

      // The first server asks Redis and is refused: its lane hands the decision to Koa, which does not count again.
      const refusedByLane = await get(one, POLLED);
      expect(refusedByLane.status).to.equal(429);
      expect(Number(refusedByLane.headers.get('retry-after'))).to.be.within(1, 60);
      expect(await counted()).to.equal(7);
      expect(laneAnswers(one)).to.equal(1);

      // The second server counted the sixth: it refuses from memory, without asking Redis.
      const refusedInMemory = await get(two, VIA_KOA);
      expect(refusedInMemory.status).to.equal(429);
      expect(Number(refusedInMemory.headers.get('retry-after'))).to.be.within(1, 60);
      expect(await counted()).to.equal(7);
    });

    it('when two installations count in one Redis, then their prefixes keep the allowances apart', async () => {
      const ours = await start(REDIS_URL, 2, newPrefix());
      const theirs = await start(REDIS_URL, 2, newPrefix());

      expect((await get(ours, VIA_KOA)).status).to.equal(200);
      expect((await get(ours, VIA_KOA)).status).to.equal(200);
      expect((await get(ours, VIA_KOA)).status).to.equal(429);
      expect((await get(theirs, VIA_KOA)).status).to.equal(200);
    });

    it('when Redis stops answering, then requests are still answered, limited per process, and one warning is logged', async () => {
      const relay = new TcpRelay(REDIS_PORT);
      await relay.open();
      try {
        const prefix = newPrefix();
        const one = await start(`redis://127.0.0.1:${relay.port}`, 3, prefix);
        const two = await start(`redis://127.0.0.1:${relay.port}`, 3, prefix);
        expect(outages(one.logger)).to.equal(0);

        await relay.close();
        const statuses = async (server: Limited, count: number): Promise<number[]> => {
          const seen: number[] = [];
          for (let i = 0; i < count; i += 1)
            seen.push((await get(server, i % 2 === 0 ? POLLED : VIA_KOA)).status);
          return seen;
        };
        // Each server now counts alone: three each, then 429.
        const first = await statuses(one, 4);
        const second = await statuses(two, 4);
        expect(first.slice(0, 3)).to.not.include(429);
        expect(first[3]).to.equal(429);
        expect(second.slice(0, 3)).to.not.include(429);
        expect(second[3]).to.equal(429);
        expect(outages(one.logger)).to.equal(1);
        expect(outages(two.logger)).to.equal(1);
      } finally {
        await relay.close();
      }
    });

    it('when no Redis answers at start, then the server starts within the wait, limits per process and says so once', async () => {
      const relay = new TcpRelay(REDIS_PORT);
      await relay.open();
      const closedPort = relay.port;
      await relay.close();

      const started = performance.now();
      const alone = await start(`redis://127.0.0.1:${closedPort}`, 2, newPrefix());
      expect(performance.now() - started).to.be.below(10_000);

      expect((await get(alone, VIA_KOA)).status).to.equal(200);
      expect((await get(alone, POLLED)).status).to.not.equal(429);
      expect((await get(alone, VIA_KOA)).status).to.equal(429);
      expect(outages(alone.logger)).to.equal(1);
    });

    it('when Redis is connected but silent, then every door answers within the deadline, counted per process; one warning, the gauge and counter show it, and only one count waits in Redis', async () => {
      const relay = new TcpRelay(REDIS_PORT);
      await relay.open();
      try {
        const prefix = newPrefix();
        const server = await start(`redis://127.0.0.1:${relay.port}`, 6, prefix);
        const counted = async (): Promise<number> => Number(await redis.get(`${prefix}:127.0.0.1`));
        // The first poll goes through Koa and teaches the lane the access; both counted in Redis.
        expect((await get(server, POLLED)).status).to.equal(200);
        expect((await get(server, POLLED)).status).to.equal(200);
        expect(await counted()).to.equal(2);
        expect(sharedSeries(server)).to.deep.include({ hortus_rate_limit_shared_degraded: 0 });

        relay.stall();
        const doors = await throughEachDoor(server);
        expect(doors.map(({ door, status }) => [door, status])).to.deep.equal([
          ['poll lane', 200],
          ['koa chain', 200],
          ['healthz', 200],
          ['box lane', 400],
        ]);
        for (const { door, ms } of doors) expect(ms, door).to.be.below(5000);
        // This process now counts alone: six in all since the stall, then 429.
        expect((await get(server, VIA_KOA)).status).to.equal(200);
        expect((await get(server, VIA_KOA)).status).to.equal(200);
        expect((await get(server, VIA_KOA)).status).to.equal(429);
        expect(outages(server.logger)).to.equal(1);
        const series = sharedSeries(server);
        expect(series['hortus_rate_limit_shared_degraded']).to.equal(1);
        expect(series['hortus_rate_limit_fallbacks_total{reason="deadline"}']).to.be.at.least(6);
        // Redis got the overdue count and nothing after it: nothing piles up behind a silent Redis.
        expect(await counted()).to.equal(3);

        // The held answer arrives late: it is dropped, and says Redis is back.
        relay.resume();
        await until(() => recoveries(server.logger) === 1, 'the line saying the limit is shared again');
        expect(sharedSeries(server)).to.deep.include({ hortus_rate_limit_shared_degraded: 0 });
        expect((await get(server, VIA_KOA)).status).to.equal(200);
        expect(await counted()).to.equal(4);
        expect(outages(server.logger)).to.equal(1);
      } finally {
        await relay.close();
      }
    });

    it('when Redis accepts connections and never answers from the start, then requests are answered at once, limited per process, with one warning', async () => {
      const held = new Set<Socket>();
      const silent = createServer((socket) => held.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = silent.address() as AddressInfo;
        const server = await start(`redis://127.0.0.1:${port}`, 4, newPrefix());
        const doors = await throughEachDoor(server);
        expect(doors.map(({ status }) => status)).to.deep.equal([200, 200, 200, 400]);
        for (const { door, ms } of doors) expect(ms, door).to.be.below(5000);
        expect((await get(server, VIA_KOA)).status).to.equal(429);
        expect(outages(server.logger)).to.equal(1);
        expect(sharedSeries(server)['hortus_rate_limit_shared_degraded']).to.equal(1);
      } finally {
        for (const socket of held) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });
  },
);

describe(
  redisServerInstalled
    ? 'the request limit shared in a Redis stopped with SIGSTOP'
    : 'the request limit shared in a Redis stopped with SIGSTOP (skipped: no redis-server to start)',
  function () {
    this.timeout(30_000);
    const cleanups: (() => Promise<void> | void)[] = [];

    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('when the Redis process is stopped, then every door answers within the deadline; when it continues, the limit is shared again', async function () {
      if (!redisServerInstalled) this.skip();
      const own = await ownRedis();
      cleanups.push(own.stop);
      const server = await serverCountingIn(`redis://127.0.0.1:${own.port}`, 100, newPrefix());
      cleanups.push(
        () => server.limit.close(),
        () => server.app.close(),
      );
      expect((await get(server, POLLED)).status).to.equal(200);
      process.kill(own.pid, 'SIGSTOP');
      const doors = await throughEachDoor(server);
      expect(doors.map(({ status }) => status)).to.deep.equal([200, 200, 200, 400]);
      for (const { door, ms } of doors) expect(ms, door).to.be.below(5000);
      expect(outages(server.logger)).to.equal(1);
      process.kill(own.pid, 'SIGCONT');
      await until(() => recoveries(server.logger) === 1, 'the line saying the limit is shared again');
      expect(sharedSeries(server)['hortus_rate_limit_shared_degraded']).to.equal(0);
    });
  },
);
