import {
  ACCESS_KEY_REPOSITORY,
  type AccessKeyRepository,
  CreateAccessKey,
  RevokeAccessKey,
  StoreUnavailableError,
} from '@hortus/core';
import { InMemoryAccessKeyRepository } from '@hortus/adapter-memory';
import { accessRuleOf, apiRouters } from '@hortus/http-koa';
import { expect, type Reply, startTestServer, type TestServer } from './harness.js';

interface TestKey {
  readonly id: string;
  readonly headers: Record<string, string>;
}

async function createKey(
  api: TestServer,
  kind: 'admin' | 'client' | 'device',
  groups: string[] = [],
): Promise<TestKey> {
  const { key, secret } = await api.container
    .get(CreateAccessKey)
    .execute({ name: `${kind} ${groups.join(' ')}`, kind, groups });
  return { id: key.id, headers: { authorization: `Bearer ${secret}` } };
}

function expectJsonMessage(reply: Reply, status: number): string {
  expect(reply.status, reply.text).to.equal(status);
  expect(reply.headers.get('content-type')).to.match(/^application\/json/u);
  const body = reply.json() as { message?: unknown };
  expect(Object.keys(body)).to.deep.equal(['message']);
  expect(body.message).to.be.a('string');
  return body.message as string;
}

const reading = (group: string, value = 21.5): Record<string, unknown> => ({
  group,
  topic: 'esp/air/temperature',
  value,
});

describe('access keys over HTTP', () => {
  describe('when no key exists (the default)', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer();
    });
    after(() => api.close());

    it('then every route answers without a key, and an Authorization header is ignored', async () => {
      await api.seed.group('open-group');

      expect((await api.get('/api/group/checkgroup?group=open-group')).json()).to.deep.equal({
        exists: true,
      });
      const withHeader = await api.call('GET', '/api/group/settings?groupId=open-group', {
        headers: { authorization: 'Bearer hk_nonsense' },
      });
      expect(withHeader.status).to.equal(200);
    });
  });

  describe('when keys exist', () => {
    let api: TestServer;
    let admin: TestKey;
    let everyGroup: TestKey;
    let tomatoesOnly: TestKey;
    let tomatoBox: TestKey;
    let revoked: TestKey;
    let userId: string;

    before(async () => {
      api = await startTestServer();
      for (const group of ['tomatoes', 'basil']) {
        await api.seed.group(group, [{ tempMax: 30 }]);
        await api.seed.action(group, 'pump_1');
        await api.seed.device(`${group}-box`, group);
      }
      userId = await api.seed.user('ada@example.org');
      admin = await createKey(api, 'admin');
      everyGroup = await createKey(api, 'client');
      tomatoesOnly = await createKey(api, 'client', ['tomatoes']);
      tomatoBox = await createKey(api, 'device', ['tomatoes']);
      revoked = await createKey(api, 'client');
      await api.container.get(RevokeAccessKey).execute({ id: revoked.id });
    });
    after(() => api.close());

    const as = (key: TestKey | undefined, method: string, path: string, json?: unknown): Promise<Reply> =>
      api.call(method, path, {
        headers: key?.headers ?? {},
        ...(json === undefined ? {} : { json }),
      });

    it('then a request without a key is 401 JSON with WWW-Authenticate: Bearer, on every route but health', async () => {
      for (const path of [
        '/api/group/checkgroup?group=tomatoes',
        '/api/data/latestdata/All?groupId=tomatoes',
        '/api/historyChart/all/someone',
        '/metrics',
        '/no/such/route',
      ]) {
        const reply = await as(undefined, 'GET', path);
        expect(expectJsonMessage(reply, 401), path).to.contain('Authorization: Bearer');
        expect(reply.headers.get('www-authenticate')).to.equal('Bearer realm="hortus"');
        expect(reply.headers.get('x-request-id')).to.match(/^[\w.:-]+$/u);
      }
      for (const path of ['/healthz', '/readyz', '/', '/api', '/api/data/latestdata', '/HEALTHZ/']) {
        expect((await as(undefined, 'GET', path)).status, path).to.equal(200);
      }
    });

    it('then the API reference (/api/docs, its script, /api/openapi.json) is readable without a key: it holds no data', async () => {
      for (const path of ['/api/docs', '/api/docs/redoc.standalone.js', '/api/openapi.json']) {
        expect((await as(undefined, 'GET', path)).status, path).to.equal(200);
        expect((await as(tomatoBox, 'GET', path)).status, path).to.equal(200);
      }
      const written = await as(undefined, 'POST', '/api/openapi.json', {});
      expect(written.status).to.not.equal(200);
    });

    it('then a wrong, malformed or revoked key is 401 "not valid", and nothing is written', async () => {
      const attempts = [
        { authorization: 'Bearer hk_wrong' },
        { authorization: `Bearer ${'x'.repeat(5000)}` },
        { authorization: (admin.headers['authorization'] ?? '').replace('Bearer', 'Basic') },
        { authorization: 'Bearer' },
        revoked.headers,
      ];
      for (const headers of attempts) {
        const reply = await api.call('GET', '/api/actions/?group=tomatoes&object=pump_1&value=on', {
          headers,
        });
        expect(expectJsonMessage(reply, 401)).to.equal('The access key is not valid');
        expect(reply.headers.get('www-authenticate')).to.equal(
          'Bearer realm="hortus", error="invalid_token"',
        );
      }
      const state = await as(admin, 'GET', '/api/actions/current_state?group=tomatoes');
      expect((state.json() as { message: { value: string }[] }).message[0]?.value).to.equal('off');
    });

    it('then an admin key reads and writes every group, user data and metrics', async () => {
      expect((await as(admin, 'GET', '/api/group/settings?groupId=basil')).status).to.equal(200);
      const settings = { settings: [{ tempMax: 30 }] };
      expect((await as(admin, 'PUT', '/api/group/update?groupId=basil', settings)).status).to.equal(200);
      expect((await as(admin, 'POST', `/api/historyChart/update/${userId}`, {})).status).to.equal(200);
      expect((await as(admin, 'GET', '/metrics')).status).to.equal(200);
    });

    it('then a client key for every group reaches every group and user data, but not metrics', async () => {
      expect((await as(everyGroup, 'GET', '/api/devices?group=basil')).status).to.equal(200);
      expect((await as(everyGroup, 'GET', `/api/historyChart/all/${userId}`)).status).to.equal(200);
      expect(expectJsonMessage(await as(everyGroup, 'GET', '/metrics'), 403)).to.equal(
        'Only an admin or a metrics key may read this',
      );
    });

    it('then a key limited to a group reads and changes that group', async () => {
      for (const path of [
        '/api/data/latestdata/All?groupId=tomatoes',
        '/api/actions/current_state?group=tomatoes',
        '/api/actions/get_automations?groupId=tomatoes&deviceName=pump_1',
        '/api/devices?group=tomatoes',
        '/api/group/abo?group=tomatoes',
        '/api/notification/latestdata/notifications?groupId=tomatoes',
      ]) {
        expect((await as(tomatoesOnly, 'GET', path)).status, path).to.equal(200);
      }
      expect(
        (await as(tomatoesOnly, 'PUT', '/api/group/update?groupId=tomatoes', { settings: [1] })).status,
      ).to.equal(200);
      expect((await as(tomatoesOnly, 'POST', '/api/data/readings', reading('tomatoes'))).status).to.equal(
        202,
      );
    });

    it('then a key limited to a group can neither read nor change another group: 403 JSON, nothing changed', async () => {
      const reads = [
        '/api/data/latestdata/All?groupId=basil',
        '/api/data/All/temperature?groupId=basil',
        '/api/data/series/esp/air/pressure?groupId=basil',
        '/api/actions/current_state?group=basil',
        '/api/actions/get_automations?groupId=basil&deviceName=pump_1',
        '/api/devices?group=basil',
        '/api/group/checkgroup?group=basil',
        '/api/group/settings?groupId=basil',
        '/api/group/settings?groupId=tomatoes&groupId=basil',
      ];
      for (const path of reads) {
        expect(expectJsonMessage(await as(tomatoesOnly, 'GET', path), 403), path).to.contain('basil');
      }
      const writes: [string, string, unknown][] = [
        ['GET', '/api/actions/?group=basil&object=pump_1&value=on', undefined],
        ['POST', '/api/actions/update', { group: 'basil', object: 'pump_1', automations: [] }],
        ['GET', '/api/devices/create?deviceId=AA:BB&group=basil&type=box', undefined],
        ['PUT', '/api/group/update?groupId=basil', { settings: ['changed'] }],
        ['POST', '/api/notification/notifications/ignore?groupId=basil', { times: [] }],
        ['POST', '/api/data/readings', [reading('tomatoes'), reading('basil')]],
      ];
      for (const [method, path, body] of writes) {
        expect(expectJsonMessage(await as(tomatoesOnly, method, path, body), 403), path).to.contain('basil');
      }
      const group = (await as(admin, 'GET', '/api/group/abo?group=basil')).json() as { settings: unknown };
      expect(group.settings).to.deep.equal([{ tempMax: 30 }]);
      const state = (await as(admin, 'GET', '/api/actions/current_state?group=basil')).json();
      expect(state).to.have.nested.property('message[0].value', 'off');
      expect((await as(admin, 'GET', '/api/devices?group=basil')).json()).to.have.nested.property(
        'message.length',
        1,
      );
      expect((await as(admin, 'GET', '/api/data/latestdata/All?groupId=basil')).json()).to.deep.equal([]);
    });

    it('then a key limited to a group is refused data outside groups (charts, e-mail) but may read the API description', async () => {
      const refusal = 'This key is limited to groups and may not reach data outside them';
      // Each in its area's error shape (SPEC section 7): `{error}` for charts, plain text for the e-mail.
      for (const [method, path, body] of [
        ['GET', `/api/historyChart/all/${userId}`, undefined],
        ['POST', `/api/historyChart/update/${userId}`, {}],
      ] as const) {
        const answer = await as(tomatoesOnly, method, path, body);
        expect(answer.status, path).to.equal(403);
        expect(answer.json(), path).to.deep.equal({ error: refusal });
      }
      const email = await as(tomatoesOnly, 'POST', `/api/changeEmail/${userId}`, {
        newEmail: 'eve@example.org',
      });
      expect(email.status).to.equal(403);
      expect(email.text).to.equal(refusal);
      expect((await as(tomatoesOnly, 'GET', '/api/openapi.json')).status).to.equal(200);
    });

    it('then a device key sends readings for its group only, and nothing else', async () => {
      const own = await as(tomatoBox, 'POST', '/api/data/readings', [
        reading('tomatoes', 19),
        reading('tomatoes', 20),
      ]);
      expect(own.status).to.equal(202);

      const mixed = await as(tomatoBox, 'POST', '/api/data/readings', [
        reading('tomatoes', 1),
        reading('basil', 2),
      ]);
      expect(expectJsonMessage(mixed, 403)).to.equal(
        'A device key may only send readings for its group, not for group "basil"',
      );
      const compact = await as(tomatoBox, 'POST', '/api/data/readings', {
        group: 'basil',
        values: { 'esp/air/humidity': 50 },
      });
      expect(compact.status).to.equal(403);
      for (const path of [
        '/api/actions/current_state?group=tomatoes',
        '/api/data/latestdata/All?groupId=tomatoes',
      ]) {
        expect(expectJsonMessage(await as(tomatoBox, 'GET', path), 403), path).to.equal(
          'A device key may only send readings for its group',
        );
      }
      const basil = await as(admin, 'GET', '/api/data/latestdata/All?groupId=basil');
      expect(basil.json()).to.deep.equal([]);
    });

    it('then the request log names the key by id, never by its secret', async () => {
      const before = api.logger.lines.length;
      await as(everyGroup, 'GET', '/api/group/checkgroup?group=tomatoes');

      const [line] = api.logger.lines.slice(before).filter((logged) => logged.event === 'request');
      expect(line).to.include({ keyId: everyGroup.id, status: 200 });
      const secret = (everyGroup.headers['authorization'] ?? '').slice('Bearer '.length);
      expect(JSON.stringify(api.logger.lines)).not.to.contain(secret);
    });

    it('then a preflight needs no key (browsers send none), and the 401 after it carries the CORS headers', async () => {
      const origin = 'http://localhost:3000';
      const preflight = await api.call('OPTIONS', '/api/group/abo?group=tomatoes', {
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get('access-control-allow-headers')).to.equal('authorization');

      const refused = await api.call('GET', '/api/group/abo?group=tomatoes', { headers: { origin } });
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('access-control-allow-origin')).to.equal(origin);
    });
  });

  describe('caching of key checks', () => {
    let api: TestServer;
    beforeEach(async () => {
      api = await startTestServer();
    });
    afterEach(() => api.close());

    it('when the first key is created, then keys are required once the 5 s cache has passed', async () => {
      expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(200);
      const admin = await createKey(api, 'admin');

      expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(200);
      api.clock.advance(5001);
      expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(401);
      const withKey = await api.call('GET', '/api/group/checkgroup?group=a', { headers: admin.headers });
      expect(withKey.status).to.equal(200);
    });

    it('when a key is revoked, then it is refused once the 5 s cache has passed; revoking the last key keeps the API locked', async () => {
      const only = await createKey(api, 'admin');
      const call = () => api.call('GET', '/api/group/checkgroup?group=a', { headers: only.headers });
      expect((await call()).status).to.equal(200);

      await api.container.get(RevokeAccessKey).execute({ id: only.id });

      expect((await call()).status).to.equal(200);
      api.clock.advance(5001);
      expect((await call()).status).to.equal(401);
      expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(401);
    });
  });

  describe('when the key store becomes slow or fails after keys were checked', () => {
    /** A waiting answer would take at least this long; one from the cache takes milliseconds even on a loaded machine. */
    const SLOW_STORE_MS = 4000;
    let api: TestServer;
    let behaviour: 'normal' | 'slow' | 'failing' = 'normal';
    beforeEach(async () => {
      behaviour = 'normal';
      api = await startTestServer(
        {},
        (container) => {
          const real = new InMemoryAccessKeyRepository();
          const through =
            <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
            async (...args: A): Promise<R> => {
              if (behaviour === 'failing') throw new StoreUnavailableError();
              if (behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, SLOW_STORE_MS));
              return call(...args);
            };
          const flaky: AccessKeyRepository = {
            create: (key) => real.create(key),
            findByHash: through((hash: string) => real.findByHash(hash)),
            list: () => real.list(),
            revoke: (id, at) => real.revoke(id, at),
            hasAny: through(() => real.hasAny()),
            listCopies: () => real.listCopies(),
            restore: (key) => real.restore(key),
          };
          container.rebind<AccessKeyRepository>(ACCESS_KEY_REPOSITORY).toConstantValue(flaky);
        },
        { store: 'memory' },
      );
    });
    afterEach(() => api.close());

    it('then a key checked moments ago keeps working without waiting for the store, and an unknown one is 503', async () => {
      const admin = await createKey(api, 'admin');
      const call = (headers: Record<string, string>) =>
        api.call('GET', '/api/group/checkgroup?group=a', { headers });
      expect((await call(admin.headers)).status).to.equal(200);

      behaviour = 'slow';
      api.clock.advance(5001);
      const started = performance.now();
      expect((await call(admin.headers)).status).to.equal(200);
      expect(performance.now() - started).to.be.below(SLOW_STORE_MS / 2);

      behaviour = 'failing';
      api.clock.advance(5001);
      expect((await call(admin.headers)).status).to.equal(200);
      expect((await call({ authorization: 'Bearer hk_never-seen-before' })).status).to.equal(503);
    });
  });

  describe('when the key store does not answer', () => {
    it('then requests are refused with 503 (never let through), while health still answers', async () => {
      const unavailable = (): Promise<never> => Promise.reject(new StoreUnavailableError());
      const api = await startTestServer(
        {},
        (container) => {
          const failing: AccessKeyRepository = {
            create: unavailable,
            findByHash: unavailable,
            list: unavailable,
            revoke: unavailable,
            hasAny: unavailable,
            listCopies: unavailable,
            restore: unavailable,
          };
          container.rebind<AccessKeyRepository>(ACCESS_KEY_REPOSITORY).toConstantValue(failing);
        },
        { store: 'memory' },
      );
      try {
        const refused = await api.get('/api/group/checkgroup?group=a');
        expect(refused.status).to.equal(503);
        expect(refused.headers.get('retry-after')).to.equal('5');
        expect((await api.get('/healthz')).status).to.equal(200);
      } finally {
        await api.close();
      }
    });
  });

  describe('the AUTH switch', () => {
    it('when AUTH=off, then keys in the store are not required', async () => {
      const api = await startTestServer({ AUTH: 'off' });
      try {
        await createKey(api, 'admin');
        expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(200);
      } finally {
        await api.close();
      }
    });

    it('when AUTH=on and no key exists, then everything but health is refused', async () => {
      const api = await startTestServer({ AUTH: 'on' });
      try {
        expect((await api.get('/api/group/checkgroup?group=a')).status).to.equal(401);
        expect((await api.get('/healthz')).status).to.equal(200);
      } finally {
        await api.close();
      }
    });
  });

  describe('the rule of each route', () => {
    const noParts = { query: {}, params: {}, body: {} };
    const ruleOf = (method: string, path: string): string => {
      for (const spec of apiRouters) {
        for (const route of spec.routes) {
          if (route.method !== method || `${spec.prefix}${route.path}` !== path) continue;
          const rule = accessRuleOf(route, path);
          if (rule.open === true) return 'open';
          const target = rule.target(noParts);
          return `${rule.operation} ${'scope' in target ? target.scope : 'groups'}`;
        }
      }
      throw new Error(`no route ${method} ${path}`);
    };

    it("then GETs that change data are writes, readings are ingest, and user data is the user's own", () => {
      expect(ruleOf('get', '/api/data/latestdata')).to.equal('open');
      expect(ruleOf('post', '/api/data/readings')).to.equal('ingest groups');
      expect(ruleOf('get', '/api/data/tem')).to.equal('read groups');
      expect(ruleOf('get', '/api/actions/')).to.equal('write groups');
      expect(ruleOf('get', '/api/devices/create')).to.equal('write groups');
      expect(ruleOf('post', '/api/actions/update')).to.equal('write groups');
      expect(ruleOf('post', '/api/notification/notifications/ignore')).to.equal('write groups');
      expect(ruleOf('get', '/api/notification/latestdata/github')).to.equal('read service');
      expect(ruleOf('delete', '/api/historyChart/delete/:userId/:chartName')).to.equal('write user');
      expect(ruleOf('post', '/api/changeEmail/:userId')).to.equal('write user');
    });

    it('then no API route but the old liveness text and the account routes (which check credentials themselves) is open', () => {
      const open = apiRouters.flatMap((spec) =>
        spec.routes
          .filter((route) => accessRuleOf(route, `${spec.prefix}${route.path}`).open === true)
          .map((route) => `${spec.prefix}${route.path}`),
      );
      expect(open).to.deep.equal([
        '/api/data/latestdata',
        '/api/group/checkgroup',
        '/api/users/',
        '/api/auth/',
        '/api/auth/logout',
        '/api/apiuserdata/:id',
        '/api/password-reset/',
        '/api/password-reset/resetvalidate',
        // Who the caller is: it answers 401 itself without a credential.
        '/api/me/',
        // The firmware updater's routes: boxes hold no key for them (routes/firmware.ts).
        '/api/hardware/update',
        '/api/hardware/download/:sha256',
      ]);
    });
  });
});
