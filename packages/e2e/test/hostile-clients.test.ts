import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { clientAddressOf, httpSettingsFromEnv, MAX_JSON_DEPTH, textNestedDeeperThan } from '@hortus/http-koa';
import { eventually, expect, startTestServer, type TestServer } from './harness.js';

/*
 * Hostile clients at the HTTP edge: forged forwarding headers, stalled and undecodable bodies, deep JSON,
 * broken framing, HEAD and cross-site requests on state-changing GETs, foreign Host names, and shared
 * caches. Each answer is a clear 4xx in JSON, and nothing is performed or kept.
 */

import { deep, openSocket, raw, untilClosed } from './raw-requests.js';

describe('Hostile clients at the HTTP edge', function () {
  this.timeout(20_000);

  describe('TRUST_PROXY: the client address behind proxies', () => {
    it('when one appending proxy is trusted, then a client forging X-Forwarded-For cannot escape the rate limit', async () => {
      const api = await startTestServer({ RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: '1' });
      try {
        // The proxy appends the address it saw (203.0.113.9) to whatever the client wrote.
        const statuses: number[] = [];
        for (let i = 0; i < 8; i += 1) {
          const reply = await api.call('GET', '/healthz', {
            headers: { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.9` },
          });
          statuses.push(reply.status);
        }
        expect(statuses).to.deep.equal([200, 200, 200, 429, 429, 429, 429, 429]);
        // Another client behind the same proxy has its own allowance.
        const other = await api.call('GET', '/healthz', { headers: { 'x-forwarded-for': '203.0.113.10' } });
        expect(other.status).to.equal(200);
      } finally {
        await api.close();
      }
    });

    it('when the proxies are listed by address, then the rightmost address not among them is the client', async () => {
      const api = await startTestServer({ RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' });
      try {
        const from = (chain: string) =>
          api.call('GET', '/healthz', { headers: { 'x-forwarded-for': chain } });
        expect((await from('1.1.1.1, 203.0.113.9, 10.1.2.3')).status).to.equal(200);
        expect((await from('2.2.2.2, 203.0.113.9, 10.9.9.9')).status).to.equal(200);
        expect((await from('3.3.3.3, 203.0.113.9')).status).to.equal(429);
      } finally {
        await api.close();
      }
    });

    it('when the chain is read, then hops count from the right and listed proxies are skipped', () => {
      expect(clientAddressOf({ hops: 0 })('127.0.0.1', 'forged')).to.equal('127.0.0.1');
      expect(clientAddressOf({ hops: 1 })('::ffff:127.0.0.1', 'forged, 203.0.113.9')).to.equal('203.0.113.9');
      expect(clientAddressOf({ hops: 2 })('10.0.0.1', 'forged, 203.0.113.9, 10.0.0.2')).to.equal(
        '203.0.113.9',
      );
      // Fewer entries than proxies: the leftmost there is.
      expect(clientAddressOf({ hops: 3 })('10.0.0.1', '203.0.113.9')).to.equal('203.0.113.9');
      const listed = clientAddressOf({ proxies: ['10.0.0.0/8', '::1'] });
      expect(listed('::1', 'forged, 203.0.113.9, 10.0.0.2')).to.equal('203.0.113.9');
      // A socket that is no proxy is the client, whatever it claims.
      expect(listed('198.51.100.7', 'forged')).to.equal('198.51.100.7');
    });

    it('when TRUST_PROXY is read, then off, on, counts and address lists are accepted and anything else reported', () => {
      expect(httpSettingsFromEnv({}).trustProxy).to.deep.equal({ hops: 0 });
      expect(httpSettingsFromEnv({ TRUST_PROXY: 'on' }).trustProxy).to.deep.equal({ hops: 1 });
      expect(httpSettingsFromEnv({ TRUST_PROXY: '2' }).trustProxy).to.deep.equal({ hops: 2 });
      expect(httpSettingsFromEnv({ TRUST_PROXY: '10.0.0.0/8,::1' }).trustProxy).to.deep.equal({
        proxies: ['10.0.0.0/8', '::1'],
      });
      expect(() => httpSettingsFromEnv({ TRUST_PROXY: 'proxy.example' })).to.throw(/TRUST_PROXY/u);
      expect(() => httpSettingsFromEnv({ TRUST_PROXY: '10.0.0.0/40' })).to.throw(/TRUST_PROXY/u);
    });
  });

  describe('stalled requests', () => {
    it('when bodies stop half-way, then each is answered 408 JSON at the body timeout and its connection closed', async () => {
      const api = await startTestServer({ BODY_TIMEOUT_MS: '300' });
      try {
        const sockets = await Promise.all(Array.from({ length: 5 }, () => openSocket(api.url)));
        const closed = sockets.map(untilClosed);
        const half = Buffer.alloc(512 * 1024, 0x20);
        for (const socket of sockets) {
          socket.write(
            'POST /api/data/readings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
              `Content-Length: ${4 * 1024 * 1024}\r\n\r\n`,
          );
          socket.write(half);
        }
        const answers = await Promise.all(closed);
        for (const { text, ms } of answers) {
          expect(text).to.match(/^HTTP\/1\.1 408 /u);
          expect(text).to.match(/connection: close/iu);
          expect(text).to.contain('"message":"Request body was not received within 300 ms"');
          expect(ms).to.be.below(3000);
        }
        // Nothing is held for them any more: the server has no connection left open.
        const open = await new Promise<number>((resolve, reject) =>
          api.running.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        );
        expect(open).to.equal(0);
      } finally {
        await api.close();
      }
    });

    it('when the headers never end, then the connection is closed after the headers timeout', async () => {
      const api = await startTestServer({ HEADERS_TIMEOUT_MS: '300' });
      try {
        const socket = await openSocket(api.url);
        const closed = untilClosed(socket);
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
        const { text, ms } = await closed;
        expect(text).to.match(/^HTTP\/1\.1 408 /u);
        expect(ms).to.be.below(3000);
      } finally {
        await api.close();
      }
    });

    it('when a connection is opened and nothing is sent (a browser preconnecting), then it is closed without a warning', async () => {
      const api = await startTestServer({ HEADERS_TIMEOUT_MS: '300' });
      try {
        const idle = await openSocket(api.url);
        const { text } = await untilClosed(idle);
        expect(text).to.equal('');
        // A request that stalls half-way is still the client's fault, and says so once.
        const stalled = await openSocket(api.url);
        stalled.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
        expect((await untilClosed(stalled)).text).to.match(/^HTTP\/1\.1 408 /u);
        const warnings = api.logger.lines.filter((line) => line.event === 'malformed request');
        expect(warnings.map((line) => line['code'])).to.deep.equal(['ERR_HTTP_REQUEST_TIMEOUT']);
      } finally {
        await api.close();
      }
    });

    it('when more connections are opened than MAX_CONNECTIONS, then the extra ones are closed at once', async () => {
      const api = await startTestServer({ MAX_CONNECTIONS: '3' });
      try {
        const held = await Promise.all([1, 2, 3].map(() => openSocket(api.url)));
        const extra = await openSocket(api.url);
        const { text } = await untilClosed(extra);
        expect(text).to.equal('');
        held.forEach((socket) => socket.destroy());
        // Once the server has seen them close (a loaded machine takes its time), a newcomer is served.
        await eventually(async () => expect((await api.get('/healthz')).status).to.equal(200), 20_000);
      } finally {
        await api.close();
      }
    });
  });

  describe('body encodings and depth', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer();
    });
    after(() => api.close());

    const settingsPath = (group: string) => `/api/group/update?groupId=${group}`;

    it('when a compressed body decompresses, then it is read as JSON (gzip, deflate, br, any case)', async () => {
      const group = api.unique('encoded');
      await api.seed.group(group);
      const body = JSON.stringify({ settings: [{ tempMin: 12 }] });
      for (const [encoding, bytes] of [
        ['gzip', gzipSync(body)],
        ['deflate', deflateSync(body)],
        ['br', brotliCompressSync(body)],
        ['GZip', gzipSync(body)],
      ] as const) {
        const reply = await raw(
          api.url,
          'PUT',
          settingsPath(group),
          { 'content-type': 'application/json', 'content-encoding': encoding },
          bytes,
        );
        expect(reply.status, encoding).to.equal(200);
        expect(JSON.parse(reply.text), encoding).to.have.deep.property('settings', [{ tempMin: 12 }]);
      }
    });

    it('when a body fails to decompress, then 400 JSON naming the encoding, logged as a warning, nothing stored', async () => {
      const group = api.unique('undecodable');
      await api.seed.group(group, [{ tempMin: 1 }]);
      const good = gzipSync(JSON.stringify({ settings: [{ tempMin: 99 }] }));
      const cases: [string, string, Buffer][] = [
        [settingsPath(group), 'gzip', Buffer.from('not gzip at all')],
        [settingsPath(group), 'gzip', good.subarray(0, good.length - 12)],
        [settingsPath(group), 'deflate', Buffer.from('\x78\x9c broken')],
        [settingsPath(group), 'br', Buffer.from('\xff\xff\xff\xff nope')],
        ['/api/data/readings', 'gzip', Buffer.from('garbage')],
      ];
      for (const [path, encoding, bytes] of cases) {
        const method = path.startsWith('/api/group') ? 'PUT' : 'POST';
        const reply = await raw(
          api.url,
          method,
          path,
          { 'content-type': 'application/json', 'content-encoding': encoding },
          bytes,
        );
        expect(reply.status, `${path} ${encoding}`).to.equal(400);
        expect(JSON.parse(reply.text)).to.deep.equal({
          message: `Request body could not be decompressed (${encoding})`,
        });
      }
      const stored = (await api.get(`/api/group/abo?group=${group}`)).json() as { settings: unknown };
      expect(stored.settings).to.deep.equal([{ tempMin: 1 }]);
      expect(api.logger.lines.filter(({ level }) => level === 'error')).to.deep.equal([]);
    });

    it('when the Content-Encoding is unknown, then 415 naming it, on the settings and the ingest route', async () => {
      const group = api.unique('unknown-coding');
      await api.seed.group(group);
      for (const [method, path] of [
        ['PUT', settingsPath(group)],
        ['POST', '/api/data/readings'],
      ] as const) {
        const reply = await raw(
          api.url,
          method,
          path,
          { 'content-type': 'application/json', 'content-encoding': 'zstd' },
          '{}',
        );
        expect(reply.status, path).to.equal(415);
        expect((JSON.parse(reply.text) as { message: string }).message).to.contain('"zstd"');
      }
    });

    it(`when JSON nests deeper than ${MAX_JSON_DEPTH} levels, then 400 on every JSON route (charts, settings, automations, ingest), and nothing is stored`, async () => {
      const group = api.unique('deep');
      await api.seed.group(group, [{ tempMin: 1 }]);
      await api.seed.action(group, 'pump_1');
      const userId = await api.seed.user(`${api.unique('deep')}@example.org`);
      const nested = (levels: number): unknown => JSON.parse(deep(levels));
      const routes: [string, string, unknown][] = [
        ['PUT', settingsPath(group), { settings: nested(400) }],
        ['POST', `/api/historyChart/update/${userId}`, { chartName: 'c', chartData: { x: nested(2000) } }],
        ['POST', '/api/actions/update', { object: 'pump_1', group, automations: nested(100) }],
        ['POST', '/api/data/readings', { group, topic: 'esp/air/temperature', value: nested(64) }],
      ];
      for (const [method, path, body] of routes) {
        const reply = await api.call(method, path, { json: body });
        expect(reply.status, path).to.equal(400);
        const answer = reply.json() as { message?: string; error?: string };
        expect(answer.message ?? answer.error, path).to.equal(
          `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`,
        );
      }
      const stored = (await api.get(`/api/group/abo?group=${group}`)).json() as { settings: unknown };
      expect(stored.settings).to.deep.equal([{ tempMin: 1 }]);
      // Within the limit the same routes still take nested JSON (objects: FerretDB stores no nested arrays).
      let settings: unknown = 1;
      for (let level = 0; level < MAX_JSON_DEPTH - 1; level += 1) settings = { a: settings };
      const within = await api.call('PUT', settingsPath(group), { json: { settings } });
      expect(within.status).to.equal(200);
    });

    it('when depth is measured, then scalars count nothing and each object or array one level', () => {
      expect(textNestedDeeperThan('1', 0)).to.equal(false);
      expect(textNestedDeeperThan('{"a":[1]}', 2)).to.equal(false);
      expect(textNestedDeeperThan('{"a":[{}]}', 2)).to.equal(true);
      expect(textNestedDeeperThan(deep(100_000), 32)).to.equal(true);
      // Brackets inside strings, escaped quotes among them, are text, not nesting.
      expect(textNestedDeeperThan('{"a":"[[[[\\"[[[["}', 2)).to.equal(false);
    });
  });

  describe('conditional GET with If-None-Match: *', () => {
    it('when the group does not exist, then 404; when it does, then 304', async () => {
      const api = await startTestServer();
      try {
        const group = api.unique('wildcard');
        await api.seed.group(group);
        const poll = (name: string) =>
          api.call('GET', `/api/group/abo?group=${name}`, { headers: { 'if-none-match': '*' } });
        expect((await poll(api.unique('missing'))).status).to.equal(404);
        const existing = await poll(group);
        expect(existing.status).to.equal(304);
        expect(existing.headers.get('etag')).to.match(/^W\//u);
      } finally {
        await api.close();
      }
    });
  });

  describe('malformed framing', () => {
    it('when clients send bytes that are not HTTP or break their chunking, then 400 and rate-limited warnings, never an error line', async () => {
      const api = await startTestServer();
      try {
        const sends = [
          'NOT HTTP AT ALL\r\n\r\n',
          'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n',
          'POST /api/data/readings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
            'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
        ];
        for (let round = 0; round < 15; round += 1) {
          for (const bytes of sends) {
            const socket = await openSocket(api.url);
            const closed = untilClosed(socket);
            socket.write(bytes);
            const { text } = await closed;
            expect(text, bytes).to.match(/^HTTP\/1\.1 400 /u);
          }
        }
        expect((await api.get('/healthz')).status).to.equal(200);
        const errors = api.logger.lines.filter(({ level }) => level === 'error');
        expect(errors).to.deep.equal([]);
        const warnings = api.logger.lines.filter(({ level }) => level === 'warn');
        expect(warnings.length).to.be.within(1, 20);
      } finally {
        await api.close();
      }
    });
  });

  describe('state-changing GETs', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer();
    });
    after(() => api.close());

    const valueOf = async (group: string): Promise<unknown> => {
      const reply = await api.get(`/api/actions/current_state?group=${group}`);
      return (reply.json() as { message: { value: unknown }[] }).message[0]?.value;
    };

    it('when HEAD asks to set a value or create a device, then 405 and nothing is done', async () => {
      const group = api.unique('head');
      await api.seed.action(group, 'pump_1', 'off');
      const set = await raw(api.url, 'HEAD', `/api/actions/?group=${group}&object=pump_1&value=on`);
      expect(set.status).to.equal(405);
      expect(set.headers['allow']).to.equal('GET');
      const create = await raw(api.url, 'HEAD', `/api/devices/create?deviceId=aa:bb&group=${group}&type=box`);
      expect(create.status).to.equal(405);
      expect(await valueOf(group)).to.equal('off');
      const devices = await api.get(`/api/devices/?group=${group}`);
      expect(devices.text).to.not.contain('aa:bb');
      // HEAD on a GET that only reads is still answered.
      expect((await raw(api.url, 'HEAD', `/api/actions/current_state?group=${group}`)).status).to.equal(200);
    });

    it('when a browser marks a state-changing request cross-site and its origin is not allowed, then 403 JSON and nothing is done', async () => {
      const group = api.unique('csrf');
      await api.seed.action(group, 'pump_1', 'off');
      const path = `/api/actions/?group=${group}&object=pump_1&value=on`;
      for (const mode of ['no-cors', 'navigate', 'cors']) {
        const reply = await api.call('GET', path, {
          headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': mode, 'sec-fetch-dest': 'image' },
        });
        expect(reply.status, mode).to.equal(403);
        expect(reply.json()).to.have.property('message').that.contains('Cross-site');
      }
      const post = await api.call('POST', '/api/data/readings', {
        json: { group, topic: 'esp/air/temperature', value: 1 },
        headers: {
          'sec-fetch-site': 'cross-site',
          'sec-fetch-mode': 'no-cors',
          origin: 'https://evil.example',
        },
      });
      expect(post.status).to.equal(403);
      expect(await valueOf(group)).to.equal('off');
      // Reading cross-site is left to CORS.
      const read = await api.call('GET', `/api/actions/current_state?group=${group}`, {
        headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' },
      });
      expect(read.status).to.equal(200);
    });

    it("when the web client's own requests come (an allowed origin, XHR, same site on another port, no browser), then they pass", async () => {
      const group = api.unique('client');
      await api.seed.action(group, 'pump_1', 'off');
      const set = (value: string, headers: Record<string, string>) =>
        api.call('GET', `/api/actions/?group=${group}&object=pump_1&value=${value}`, { headers });
      const allowed = await set('on', {
        origin: 'http://localhost:3000',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'cors',
      });
      expect(allowed.status).to.equal(200);
      const sameSite = await set('off', {
        origin: 'http://localhost:5173',
        'sec-fetch-site': 'same-site',
        'sec-fetch-mode': 'cors',
      });
      expect(sameSite.status).to.equal(200);
      const sameOrigin = await set('on', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' });
      expect(sameOrigin.status).to.equal(200);
      expect((await set('off', {})).status).to.equal(200);
      expect(await valueOf(group)).to.equal('off');
    });
  });
});
