import { loadConfig } from '@hortus/cli';
import { ConfigError, CreateAccessKey, STORE_LIFECYCLE, type StoreLifecycle } from '@hortus/core';
import {
  DOCS_CONTENT_SECURITY_POLICY,
  HttpMetrics,
  httpSettingsFromEnv,
  RateLimiter,
} from '@hortus/http-koa';
import { eventually, expect, type Reply, sample, startTestServer, type TestServer } from './harness.js';

function expectSecurityHeaders(reply: Reply, what: string): void {
  expect(reply.headers.get('x-content-type-options'), what).to.equal('nosniff');
  expect(reply.headers.get('x-frame-options'), what).to.equal('DENY');
  expect(reply.headers.get('referrer-policy'), what).to.equal('no-referrer');
  expect(reply.headers.get('x-powered-by'), what).to.equal(null);
}

describe('operations: health, metrics, rate limit and security headers', () => {
  describe('health', () => {
    it('when the store answers, then /healthz is ok and /readyz is ready', async () => {
      const api = await startTestServer();
      try {
        expect((await api.get('/healthz')).json()).to.deep.equal({ status: 'ok' });
        const ready = await api.get('/readyz');
        expect(ready.status).to.equal(200);
        expect(ready.json()).to.deep.equal({ status: 'ready' });
      } finally {
        await api.close();
      }
    });

    it('when the store does not answer, then /readyz is 503 JSON while /healthz stays ok', async () => {
      const api = await startTestServer({}, (container) => {
        const store = container.get<StoreLifecycle>(STORE_LIFECYCLE);
        container.rebind<StoreLifecycle>(STORE_LIFECYCLE).toConstantValue({
          start: () => store.start(),
          close: () => store.close(),
          ping: async () => false,
        });
      });
      try {
        const ready = await api.get('/readyz');
        expect(ready.status).to.equal(503);
        expect(ready.json()).to.deep.equal({
          status: 'unavailable',
          message: 'The data store does not answer',
        });
        expect((await api.get('/healthz')).status).to.equal(200);
      } finally {
        await api.close();
      }
    });
  });

  describe('metrics', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer({ AUTOMATIONS: 'on', AUTOMATION_TICK_MS: '20' });
    });
    after(() => api.close());

    it('when requests were answered, then /metrics counts them per route pattern and status, with latency', async () => {
      const userId = await api.seed.user('metrics@example.org');
      await api.get('/api/group/checkgroup?group=a');
      await api.get('/api/group/checkgroup?group=b');
      await api.get(`/api/historyChart/all/${userId}`);
      await api.get('/api/historyChart/all/someone-else');
      await api.get('/no/such/path/never-a-label');

      const reply = await api.get('/metrics');

      expect(reply.status).to.equal(200);
      expect(reply.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
      const text = reply.text;
      expect(
        sample(text, 'http_requests_total{method="GET",route="/api/group/checkgroup",status="200"}'),
      ).to.equal(2);
      expect(
        sample(text, 'http_requests_total{method="GET",route="/api/historyChart/all/:userId",status="404"}'),
      ).to.equal(2);
      expect(sample(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).to.equal(1);
      expect(text).not.to.contain(userId);
      expect(text).not.to.contain('never-a-label');
      const series = 'http_request_duration_seconds_bucket{method="GET",route="/api/group/checkgroup"';
      expect(sample(text, `${series},le="+Inf"}`)).to.equal(2);
      expect(sample(text, `${series},le="10"}`)).to.equal(2);
      expect(
        sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/group/checkgroup"}'),
      ).to.equal(2);
      expect(text).to.match(/^# TYPE http_request_duration_seconds histogram$/mu);
    });

    it('when readings are ingested and the engine switches and alerts, then their counters grow', async () => {
      const group = api.unique('metrics-greenhouse');
      await api.seed.group(group, [{ tempMin: 10 }, { tempMax: 30 }]);
      await api.seed.action(group, 'ventilator_1');
      await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'ventilator_1',
          automations: [
            {
              timeAutomations: [],
              sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28' }],
            },
          ],
        },
      });
      const before = (await api.get('/metrics')).text;

      const posted = await api.call('POST', '/api/data/readings', {
        json: [
          { group, topic: 'esp/air/temperature', value: 31 },
          { group, topic: 'esp/air/humidity', value: 40 },
          { group, topic: 'esp/air/humidity', value: 'wet' },
        ],
      });
      expect(posted.status).to.equal(202);

      const ingested = (text: string): number =>
        sample(text, 'hortus_readings_ingested_total{source="http"}') ?? NaN;
      await eventually(async () => {
        const text = (await api.get('/metrics')).text;
        expect(ingested(text) - ingested(before)).to.equal(2);
        expect(sample(text, 'hortus_automations_fired_total')).to.equal(1);
        expect(sample(text, 'hortus_alerts_raised_total')).to.equal(1);
      });
      expect(sample(before, 'hortus_readings_ingested_total{source="mqtt"}')).to.equal(0);
    });

    it("when /metrics is read, then it carries the process's own series under prom-client's usual names", async () => {
      const text = (await api.get('/metrics')).text;
      for (const series of [
        'process_cpu_user_seconds_total',
        'process_cpu_system_seconds_total',
        'process_resident_memory_bytes',
        'process_start_time_seconds',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_active_handles_total',
      ]) {
        expect(text, series).to.match(new RegExp(`^${series}(\\{[^}]*\\})? [0-9.e+-]+$`, 'mu'));
      }
      // GC durations have samples only once a collection happened, but the series is always declared.
      expect(text).to.contain('# TYPE nodejs_gc_duration_seconds histogram');
      // Each series is described once, whatever else the server counts.
      const helps = text.split('\n').filter((line) => line.startsWith('# HELP '));
      expect(new Set(helps).size).to.equal(helps.length);
    });

    it('when keys are in use, then /metrics needs an admin key', async () => {
      const other = await startTestServer();
      try {
        const create = (kind: string) => other.container.get(CreateAccessKey).execute({ name: kind, kind });
        const admin = await create('admin');
        const client = await create('client');
        const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

        expect((await other.get('/metrics')).status).to.equal(401);
        expect((await other.call('GET', '/metrics', bearer(client.secret))).status).to.equal(403);
        expect((await other.call('GET', '/metrics', bearer(admin.secret))).status).to.equal(200);
      } finally {
        await other.close();
      }
    });

    it('when a label value holds quotes or an unknown method, then the exposition stays well-formed and bounded', () => {
      const metrics = new HttpMetrics();
      metrics.observeRequest('BREW', '/a"b\\c\nd', 418, 0.2);
      metrics.countMqttReadingsFrom(() => 7);

      const text = metrics.render();

      expect(text).to.contain('http_requests_total{method="OTHER",route="/a\\"b\\\\c\\nd",status="418"} 1');
      expect(sample(text, 'hortus_readings_ingested_total{source="mqtt"}')).to.equal(7);
      expect(text.endsWith('\n')).to.equal(true);
    });

    it('when the MQTT bridge drops messages or readings, then /metrics counts them by reason', () => {
      const metrics = new HttpMetrics();
      expect(metrics.render(), 'no bridge, no MQTT series').not.to.contain('hortus_mqtt_');
      metrics.countMqttDropsFrom(() => ({
        oversized: 1,
        malformed: 2,
        rejected: 3,
        failed: 4,
        regrouped: 5,
      }));

      const text = metrics.render();

      expect(sample(text, 'hortus_mqtt_messages_dropped_total{reason="oversized"}')).to.equal(1);
      expect(sample(text, 'hortus_mqtt_messages_dropped_total{reason="malformed"}')).to.equal(2);
      expect(sample(text, 'hortus_mqtt_readings_dropped_total{reason="rejected"}')).to.equal(3);
      expect(sample(text, 'hortus_mqtt_readings_dropped_total{reason="failed"}')).to.equal(4);
      expect(sample(text, 'hortus_mqtt_readings_regrouped_total')).to.equal(5);
    });
  });

  describe('rate limit', () => {
    it('when a client exceeds its allowance, then 429 JSON with Retry-After in seconds, on every route', async () => {
      const api = await startTestServer({ RATE_LIMIT_PER_MINUTE: '3' });
      try {
        for (let i = 0; i < 3; i += 1)
          expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(200);

        for (const path of ['/api/group/checkgroup?group=a', '/healthz']) {
          const limited = await api.get(path);
          expect(limited.status, path).to.equal(429);
          expect(limited.json())
            .to.have.property('message')
            .that.matches(/^Too many requests/u);
          expect(limited.headers.get('retry-after')).to.equal('20');
          expect(limited.headers.get('x-request-id')).to.match(/^[\w.:-]+$/u);
          expectSecurityHeaders(limited, path);
        }
        const logged = api.logger.lines.filter((line) => line.event === 'request' && line['status'] === 429);
        expect(logged).to.have.length(2);
      } finally {
        await api.close();
      }
    });

    it('when TRUST_PROXY is on, then clients are told apart by X-Forwarded-For; when off, the header is ignored', async () => {
      const behindProxy = await startTestServer({ RATE_LIMIT_PER_MINUTE: '1', TRUST_PROXY: 'on' });
      const direct = await startTestServer({ RATE_LIMIT_PER_MINUTE: '1' });
      try {
        const from = (api: TestServer, address: string) =>
          api.call('GET', '/healthz', { headers: { 'x-forwarded-for': address } });

        expect((await from(behindProxy, '203.0.113.1')).status).to.equal(200);
        expect((await from(behindProxy, '203.0.113.2')).status).to.equal(200);
        expect((await from(behindProxy, '203.0.113.1')).status).to.equal(429);
        expect((await from(direct, '203.0.113.1')).status).to.equal(200);
        expect((await from(direct, '203.0.113.2')).status).to.equal(429);
      } finally {
        await Promise.all([behindProxy.close(), direct.close()]);
      }
    });

    it('when the limit is 0, then there is none', async () => {
      const api = await startTestServer({ RATE_LIMIT_PER_MINUTE: '0' });
      try {
        const statuses = await Promise.all(Array.from({ length: 50 }, () => api.get('/healthz')));
        expect(new Set(statuses.map((reply) => reply.status))).to.deep.equal(new Set([200]));
      } finally {
        await api.close();
      }
    });

    it('when time passes, then the bucket refills at the rate; idle and surplus clients are forgotten', () => {
      let now = 0;
      const limiter = new RateLimiter(60, () => now, 100);
      for (let i = 0; i < 60; i += 1) expect(limiter.take('a').allowed).to.equal(true);
      expect(limiter.take('a')).to.deep.equal({ allowed: false, retryAfterSeconds: 1 });
      now += 1000;
      expect(limiter.take('a').allowed).to.equal(true);
      expect(limiter.take('a').allowed).to.equal(false);

      for (let i = 0; i < 500; i += 1) limiter.take(`client-${i}`);
      expect(limiter.clients).to.equal(100);
      now += 60_000;
      for (let i = 0; i < 60; i += 1) limiter.take('fresh');
      expect(limiter.clients).to.equal(1);
    });
  });

  describe('configuration', () => {
    it('when nothing is set, then keys are automatic, the limit is 600 a minute and proxies are not trusted', () => {
      expect(loadConfig({})).to.deep.include({
        auth: 'auto',
        authCacheMs: 5000,
        rateLimitPerMinute: 600,
        trustProxy: { hops: 0 },
      });
      expect(loadConfig({ AUTH: 'OFF', RATE_LIMIT_PER_MINUTE: '0', TRUST_PROXY: 'on' })).to.deep.include({
        auth: 'off',
        rateLimitPerMinute: 0,
        trustProxy: { hops: 1 },
      });
    });

    it('when the values are unusable, then every problem is reported at once', () => {
      expect(() =>
        loadConfig({ AUTH: 'maybe', AUTH_CACHE_MS: '-1', RATE_LIMIT_PER_MINUTE: 'lots', TRUST_PROXY: 'yes' }),
      )
        .to.throw(ConfigError)
        .with.property('problems')
        .that.has.length(4);
    });
  });

  describe('security headers', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer();
    });
    after(() => api.close());

    it('then every answer carries them: success, client error, server route, and the docs page', async () => {
      const answers: [string, Reply][] = [
        ['json', await api.get('/api/group/checkgroup?group=a')],
        ['text', await api.get('/')],
        ['404', await api.get('/nope')],
        ['405', await api.call('DELETE', '/api/group/checkgroup')],
        [
          '400',
          await api.call('POST', '/api/actions/update', {
            body: '{bad',
            headers: { 'content-type': 'application/json' },
          }),
        ],
        ['metrics', await api.get('/metrics')],
        ['docs', await api.get('/api/docs')],
      ];
      for (const [what, reply] of answers) expectSecurityHeaders(reply, what);
      for (const [what, reply] of answers.filter(([name]) => name !== 'docs')) {
        expect(reply.headers.get('content-security-policy'), what).to.equal(
          "default-src 'none'; frame-ancestors 'none'",
        );
      }
      expect(answers.at(-1)?.[1].headers.get('content-security-policy')).to.equal(
        DOCS_CONTENT_SECURITY_POLICY,
      );
    });

    it('then odd requests get short answers that reveal no internals', async () => {
      const odd = await Promise.all([
        api.call('POST', '/api/data/readings', {
          body: '[{"group":',
          headers: { 'content-type': 'application/json' },
        }),
        api.call('POST', '/api/data/readings', { body: 'x', headers: { 'content-type': 'text/plain' } }),
        api.call('PUT', '/api/group/update?groupId=a', {
          body: '{"settings": 1',
          headers: { 'content-type': 'application/json' },
        }),
        api.call('POST', '/api/changeEmail/%E0%A4%A', { json: { newEmail: 'a@b.cd' } }),
        api.get('/api/data/All/temperature?groupId=a&count=1e999&startDate=yesterday'),
        api.get('/api/historyChart/settings/%00/%ff'),
      ]);
      for (const reply of odd) {
        expect(reply.status, reply.text).to.be.within(400, 499);
        expect(reply.text).not.to.match(/node_modules|\.[jt]s:\d+|\bat \S+ \(|Error:|SyntaxError/u);
        expect(reply.text.length).to.be.below(300);
      }
    });
  });

  describe('request lines', () => {
    it('when LOG_REQUESTS=off, then neither Koa nor the poll lane writes a line per request', async () => {
      const api = await startTestServer({ LOG_REQUESTS: 'off' });
      try {
        expect((await api.get('/healthz')).status).to.equal(200);
        // latestdata is answered by the poll lane; checkGroup by Koa.
        expect((await api.get('/api/data/latestdata/all?groupId=quiet')).status).to.equal(200);
        expect((await api.get('/api/group/checkGroup?group=quiet')).status).to.equal(200);
        expect(
          (
            await api.call('POST', '/api/data/readings', {
              body: '{"group":',
              headers: { 'content-type': 'application/json' },
            })
          ).status,
        ).to.equal(400);
        expect(api.logger.lines.filter((line) => line.event === 'request')).to.deep.equal([]);
      } finally {
        await api.close();
      }
    });

    it('when LOG_REQUESTS is neither on nor off, then the server does not start', () => {
      expect(() => httpSettingsFromEnv({ LOG_REQUESTS: 'quiet' })).to.throw('LOG_REQUESTS must be on or off');
    });
  });
});
