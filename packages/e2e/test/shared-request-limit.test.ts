import { MongoStore } from '@hortus/adapter-mongo';
import { loadConfig } from '@hortus/cli';
import { isListening } from '@hortus/test-support';
import { ConfigError, STORE_LIFECYCLE, type StoreLifecycle } from '@hortus/core';
import { expect, startTestServer, testStore, type TestServer } from './harness.js';

/** The Redis the tests count in; CI starts one on this port (.ci/run). */
const REDIS_PORT = Number(process.env['HORTUS_TEST_REDIS_PORT'] ?? '6379');
const REDIS_URL = `redis://127.0.0.1:${REDIS_PORT}`;
const POLLED = '/api/actions/current_state?group=greenhouse';

const redisUp = await isListening(REDIS_PORT);

async function statuses(api: TestServer, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i += 1) seen.push((await api.get(i % 2 === 0 ? POLLED : '/healthz')).status);
  return seen;
}

describe(
  redisUp
    ? 'RATE_LIMIT_REDIS_URL: the request limit counted in Redis for the installation'
    : `RATE_LIMIT_REDIS_URL (skipped: no Redis answers on 127.0.0.1:${REDIS_PORT}; .ci/run starts one)`,
  () => {
    const servers: TestServer[] = [];
    const start = async (env: Record<string, string> = {}): Promise<TestServer> => {
      const api = await startTestServer({
        RATE_LIMIT_PER_MINUTE: '4',
        RATE_LIMIT_REDIS_URL: REDIS_URL,
        ...env,
      });
      servers.push(api);
      return api;
    };

    beforeEach(function () {
      if (!redisUp) this.skip();
    });

    afterEach(async function () {
      this.timeout(60_000);
      for (const api of servers.splice(0).reverse()) await api.close();
    });

    it('when a client uses up the allowance, then 429 with Retry-After; another installation on the same Redis keeps its own', async function () {
      this.timeout(60_000);
      const ours = await start();
      const theirs = await start();

      expect(await statuses(ours, 4)).to.not.include(429);
      const refused = await ours.get(POLLED);
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(await statuses(theirs, 2)).to.not.include(429);
      expect(ours.logger.lines.filter((line) => line.level === 'warn')).to.deep.equal([]);
    });

    it(
      testStore === 'mongodb'
        ? 'when two servers share one MongoDB (one installation), then they share the allowance'
        : 'when two servers share one MongoDB, then they share the allowance (skipped: HORTUS_TEST_STORE is not mongodb)',
      async function () {
        if (testStore !== 'mongodb') this.skip();
        this.timeout(60_000);
        const first = await start();
        const store = first.container.get<StoreLifecycle>(STORE_LIFECYCLE);
        if (!(store instanceof MongoStore)) throw new Error('The first server is not on MongoDB');
        const second = await start({ MONGODB_DB: store.db.databaseName });

        expect(await statuses(first, 2)).to.not.include(429);
        expect(await statuses(second, 2)).to.not.include(429);
        expect((await first.get('/healthz')).status).to.equal(429);
        expect((await second.get(POLLED)).status).to.equal(429);
      },
    );
  },
);

describe('RATE_LIMIT_REDIS_URL settings', () => {
  it('when it is not a redis:// or rediss:// URL, then the server does not start, and the problem names it', () => {
    expect(() => loadConfig({ RATE_LIMIT_REDIS_URL: 'http://cache.example:6379' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals(['RATE_LIMIT_REDIS_URL must be a redis:// or rediss:// URL']);
    expect(loadConfig({ RATE_LIMIT_REDIS_URL: 'rediss://cache.example:6380/1' })).to.deep.include({
      rateLimitRedisUrl: 'rediss://cache.example:6380/1',
    });
  });
});
