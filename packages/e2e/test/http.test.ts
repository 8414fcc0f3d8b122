import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { StoreUnavailableError } from '@hortus/core';
import { loadConfig, startServer } from '@hortus/cli';
import { apiRouters, boxRouters } from '@hortus/http-koa';
import {
  CapturingLogger,
  expect,
  FakeCodeHost,
  failingStore,
  startTestServer,
  type TestServer,
} from './harness.js';

const execFileAsync = promisify(execFile);

interface Operation {
  readonly operationId?: string;
  readonly parameters?: unknown[];
  readonly responses: Record<string, unknown>;
}

describe('HTTP transport, across routes', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ CORS_ORIGINS: 'http://localhost:3000, https://app.example.org' });
  });
  after(async () => {
    await api.close();
  });

  it('GET / answers "Running..." and GET /api (with or without a slash) "Running API..."', async () => {
    expect((await api.get('/')).text).to.equal('Running...');
    expect((await api.get('/api')).text).to.equal('Running API...');
    expect((await api.get('/api/')).text).to.equal('Running API...');
  });

  it('when a path is written in another case or with a trailing slash, then it reaches its route', async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group);
    for (const path of [`/API/Group/CHECKGROUP?group=${group}`, `/api/group/checkGroup/?group=${group}`]) {
      const reply = await api.get(path);
      expect(reply.status, path).to.equal(200);
      expect(reply.json(), path).to.deep.equal({ exists: true });
    }
  });

  it('when unknown query parameters are sent (cache busters), then they are ignored', async () => {
    const reply = await api.get(
      `/api/actions/current_state?group=${api.unique('g')}&_=1718000000000&foo=bar&foo=baz`,
    );
    expect(reply.status).to.equal(200);
  });

  it('when no route matches, then 404 JSON; a known path with another method is 405 JSON with Allow', async () => {
    const unknown = await api.get('/api/nothing/here');
    expect(unknown.status).to.equal(404);
    expect(unknown.json()).to.deep.equal({ message: 'Not found' });
    const wrongMethod = await api.call('DELETE', '/api/actions/current_state');
    expect(wrongMethod.status).to.equal(405);
    expect(wrongMethod.json()).to.deep.equal({ message: 'Method not allowed' });
    expect(wrongMethod.headers.get('allow')).to.include('GET');
  });

  it('when a JSON body is malformed or a bare scalar, then 400 {message}', async () => {
    for (const body of ['{"group": "a",', '"just a string"', '{"__proto__": {"x": 1}}']) {
      const reply = await api.call('POST', '/api/actions/update', {
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status, body).to.equal(400);
      expect(reply.json(), body).to.deep.equal({ message: 'Request body is not valid JSON' });
    }
  });

  it('when a body is an array instead of an object, then 400 {message}', async () => {
    const reply = await api.call('PUT', '/api/group/update?groupId=g', { json: [1, 2] });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ message: 'body must be object' });
  });

  it("when a body is larger than 1 MB, then 413 in the route's body shape", async () => {
    const settings = 'x'.repeat(1024 * 1024 + 10);
    const reply = await api.call('PUT', '/api/group/update?groupId=g', { json: { settings } });
    expect(reply.status).to.equal(413);
    expect(reply.json()).to.deep.equal({ message: 'Request body is larger than 1048576 bytes' });
  });

  describe('CORS', () => {
    it('when an allowed origin sends a preflight, then 204 with origin, credentials and the five methods', async () => {
      const reply = await api.call('OPTIONS', '/api/historyChart/change_type/u/c', {
        headers: {
          origin: 'http://localhost:3000',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(reply.status).to.equal(204);
      expect(reply.headers.get('access-control-allow-origin')).to.equal('http://localhost:3000');
      expect(reply.headers.get('access-control-allow-credentials')).to.equal('true');
      expect(reply.headers.get('access-control-allow-methods')).to.equal('GET, POST, PUT, DELETE, OPTIONS');
      expect(reply.headers.get('access-control-allow-headers')).to.equal('content-type');
    });

    it('when an allowed origin calls, then the answer (also an error) carries its CORS headers', async () => {
      for (const path of ['/api/data/latestdata', '/api/nothing']) {
        const reply = await api.call('GET', path, { headers: { origin: 'https://app.example.org' } });
        expect(reply.headers.get('access-control-allow-origin'), path).to.equal('https://app.example.org');
        expect(reply.headers.get('vary'), path).to.match(/origin/iu);
      }
    });

    it('when another origin calls, then no CORS permission is given', async () => {
      const preflight = await api.call('OPTIONS', '/api/data/latestdata', {
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).to.equal(null);
      const simple = await api.call('GET', '/api/data/latestdata', {
        headers: { origin: 'https://evil.example' },
      });
      expect(simple.headers.get('access-control-allow-origin')).to.equal(null);
    });
  });

  describe('logging', () => {
    it('when a request is answered, then one JSON line with method, path, status, ms and request id', async () => {
      const before = api.logger.lines.length;
      const reply = await api.call('GET', '/api/group/checkgroup?group=g&token=secret', {
        headers: { 'x-request-id': 'trace-42' },
      });
      expect(reply.headers.get('x-request-id')).to.equal('trace-42');
      const lines = api.logger.lines.slice(before);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.include({
        event: 'request',
        method: 'GET',
        path: '/api/group/checkgroup',
        status: 200,
        requestId: 'trace-42',
      });
      expect(lines[0]?.['ms']).to.be.a('number');
      expect(JSON.stringify(lines[0])).to.not.include('secret');
    });

    it('when the caller sends no usable request id, then a new one is made', async () => {
      const reply = await api.call('GET', '/', { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(reply.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/u);
    });
  });

  describe('OpenAPI', () => {
    it('GET /api/openapi.json describes every route in OpenAPI 3.1 with the validating schemas', async () => {
      const reply = await api.get('/api/openapi.json');
      expect(reply.status).to.equal(200);
      const document = reply.json() as {
        openapi: string;
        paths: Record<string, Record<string, { parameters: { name: string; required: boolean }[] }>>;
      };
      expect(document.openapi).to.equal('3.1.0');
      const operations = Object.values(document.paths).reduce(
        (sum, path) => sum + Object.keys(path).length,
        0,
      );
      const routes = [...apiRouters, ...boxRouters({ httpsPort: 8443 })].reduce(
        (sum, router) => sum + router.routes.length,
        0,
      );
      // The meta routes (/, /api, the document, the docs page and its script) and /healthz, /readyz, /metrics.
      expect(operations).to.equal(routes + 5 + 3);
      expect(document.paths['/api/historyChart/settings/{userId}/{chartName}']).to.have.property('get');
      expect(document.paths['/api/actions/current_state']?.['get']?.parameters).to.deep.include({
        name: 'group',
        in: 'query',
        required: true,
        description: 'Group name',
        schema: { type: 'string', minLength: 1, maxLength: 100 },
        example: 'demo',
      });
    });

    it('when a client reads the document, then it declares the bearer scheme of access keys, optional while keys are off', async () => {
      const document = (await api.get('/api/openapi.json')).json() as {
        security: Record<string, string[]>[];
        components: {
          securitySchemes: Record<string, { type: string; scheme: string; description: string }>;
        };
        paths: Record<string, Record<string, { security?: unknown[] }>>;
      };
      const scheme = document.components.securitySchemes['bearerAuth'];
      expect(scheme).to.include({ type: 'http', scheme: 'bearer' });
      expect(scheme?.description).to.include('hk_').and.include('log-in tokens');
      expect(document.security).to.deep.equal([{ bearerAuth: [] }, {}]);
      // The old service's liveness texts never need a key; the data routes inherit the global requirement.
      expect(document.paths['/']?.['get']?.security).to.deep.equal([]);
      expect(document.paths['/api/data/latestdata']?.['get']?.security).to.deep.equal([]);
      expect(document.paths['/api/actions/current_state']?.['get']).to.not.have.property('security');
    });

    it('when the document is read, then every operation has a unique operationId, the shared 401/403/429 answers and examples', async () => {
      const document = (await api.get('/api/openapi.json')).json() as {
        tags: { name: string; description: string }[];
        paths: Record<string, Record<string, Operation>>;
        components: { responses: Record<string, unknown> };
      };
      const operations = Object.entries(document.paths).flatMap(([path, byMethod]) =>
        Object.entries(byMethod).map(([method, op]) => ({ at: `${method} ${path}`, op })),
      );
      const ids = operations.map(({ op }) => op.operationId);

      expect(ids.every((id) => typeof id === 'string' && /^[A-Za-z0-9]+$/u.test(id))).to.equal(true);
      expect(new Set(ids).size).to.equal(ids.length);
      // A route that says more about one of them (the e-mail change's 401) keeps its own answer.
      for (const { at, op } of operations) expect(op.responses, at).to.include.keys('401', '403', '429');
      expect(document.paths['/api/data/export']?.['get']?.responses).to.deep.include({
        401: { $ref: '#/components/responses/Unauthorized' },
        403: { $ref: '#/components/responses/Forbidden' },
        429: { $ref: '#/components/responses/TooManyRequests' },
      });
      expect(Object.keys(document.components.responses)).to.have.members([
        'Unauthorized',
        'Forbidden',
        'TooManyRequests',
      ]);
      expect(document.paths['/api/data/export']?.['get']?.parameters).to.deep.include({
        name: 'groupId',
        in: 'query',
        required: true,
        description: 'Group name',
        schema: { type: 'string', minLength: 1, maxLength: 100 },
        example: 'demo',
      });
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        expect(document.paths[path]?.['get']?.operationId, path).to.be.a('string');
      }
      const tags = document.tags.map((tag) => tag.name);
      expect(new Set(tags).size).to.equal(tags.length);
    });

    it('when Redocly CLI lints the document with its recommended rules, then it finds no problem', async function () {
      this.timeout(60_000);
      const dir = await mkdtemp(join(tmpdir(), 'hortus-openapi-'));
      try {
        const file = join(dir, 'openapi.json');
        await writeFile(file, (await api.get('/api/openapi.json')).text);
        const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

        const { stdout } = await execFileAsync(
          process.execPath,
          [cli, 'lint', '--extends=recommended', '--format=json', file],
          { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
        );

        const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number } };
        expect(report.totals).to.include({ errors: 0, warnings: 0 });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('when /api/docs is opened, then Redoc renders the document with its script from this server and nothing from elsewhere', async () => {
      const reply = await api.get('/api/docs');
      const script = await api.get('/api/docs/redoc.standalone.js');

      expect(reply.status).to.equal(200);
      expect(reply.headers.get('content-type')).to.match(/^text\/html/u);
      expect(reply.text).to.include('<redoc spec-url="/api/openapi.json"');
      // Without scripts, a plain list of the operations.
      expect(reply.text).to.include('/api/notification/notifications/ignore');
      expect(reply.text).not.to.match(/https?:\/\//iu);
      const references = [...reply.text.matchAll(/\s(?:src|href|spec-url)="([^"]*)"/gu)].map((m) => m[1]);
      expect(references).to.deep.equal([
        'data:,',
        '/api/openapi.json',
        '/api/openapi.json',
        '/api/docs/redoc.standalone.js',
      ]);
      expect(reply.headers.get('content-security-policy'))
        .to.include("script-src 'self'")
        .and.include("connect-src 'self'");
      expect(script.status).to.equal(200);
      expect(script.headers.get('content-type')).to.match(/^application\/javascript/u);
      expect(script.text.length).to.be.above(500_000);
      // Redoc's own footer logo would come from its CDN: the served bundle names no outside host for it.
      expect(script.text).not.to.include('cdn.redoc.ly');
    });

    it('when the docs page is installed, then Redoc comes as its standalone bundle alone, without React, mobx, styled-components or core-js', () => {
      const fromHttpKoa = createRequire(createRequire(import.meta.url).resolve('@hortus/http-koa'));
      const fromRedoc = createRequire(fromHttpKoa.resolve('redoc/package.json'));

      expect(fromRedoc.resolve('redoc/bundles/redoc.standalone.js')).to.match(/redoc\.standalone\.js$/u);
      for (const buildDependency of ['react', 'react-dom', 'mobx', 'styled-components', 'core-js']) {
        expect(() => fromRedoc.resolve(buildDependency), buildDependency).to.throw(/Cannot find module/u);
      }
    });
  });
});

describe('HTTP transport, when the store fails', () => {
  let api: TestServer;
  before(async () => {
    // Memory in the Mongo pass too: the repositories are replaced by failing stubs anyway.
    api = await startTestServer(
      {},
      (container) => failingStore(container, () => new Error('disk on fire at /var/db')),
      { store: 'memory' },
    );
  });
  after(async () => {
    await api.close();
  });

  const json = { 'content-type': 'application/json' };
  const cases: [string, string, string | undefined, number, string | Record<string, string>][] = [
    ['GET', '/api/data/latestdata/All?groupId=g', undefined, 500, { message: 'Internal Server Error' }],
    ['GET', '/api/actions/current_state?group=g', undefined, 500, { message: 'Internal Server Error' }],
    [
      'GET',
      '/api/actions/get_automations?groupId=g&deviceName=d',
      undefined,
      500,
      { message: 'Internal Server Error' },
    ],
    [
      'GET',
      '/api/devices/create?deviceId=d1&group=g&type=t',
      undefined,
      500,
      { message: 'Internal Server Error' },
    ],
    [
      'GET',
      '/api/notification/latestdata/notifications?groupId=g',
      undefined,
      500,
      { message: 'Internal Server Error' },
    ],
    ['GET', '/api/group/checkgroup?group=g', undefined, 500, { message: 'Internal server error' }],
    ['PUT', '/api/group/update?groupId=g', '{"settings":[]}', 500, { message: 'Internal server error' }],
    ['GET', '/api/historyChart/all/u', undefined, 500, { error: 'An error occurred while getting charts.' }],
    [
      'POST',
      '/api/historyChart/update/u',
      '{}',
      500,
      { error: 'An error occurred while adding a new chart.' },
    ],
    [
      'PUT',
      '/api/historyChart/change_datasets/u/c/lux',
      '{"checked":true}',
      500,
      { error: 'An error occurred while updating charts.' },
    ],
    [
      'PUT',
      '/api/historyChart/change_type/u/c',
      '{"type":"line"}',
      500,
      { error: 'An error occurred while updating chart type.' },
    ],
    [
      'PUT',
      '/api/historyChart/change_data_interval/u/c',
      '{"data_interval":1}',
      500,
      { error: 'An error occurred while updating data interval.' },
    ],
    [
      'DELETE',
      '/api/historyChart/delete/u/c',
      undefined,
      500,
      { error: 'An error occurred while deleting the chart.' },
    ],
    [
      'POST',
      '/api/changeEmail/u',
      '{"newEmail":"a@b.org"}',
      500,
      'An error occurred while changing the e-mail.',
    ],
  ];

  it("when a route's store call throws, then the route's SPEC 500 body, never the internals", async () => {
    for (const [method, path, body, status, expected] of cases) {
      const reply = await api.call(method, path, { ...(body === undefined ? {} : { body, headers: json }) });
      expect(reply.status, path).to.equal(status);
      if (typeof expected === 'string') expect(reply.text, path).to.equal(expected);
      else expect(reply.json(), path).to.deep.equal(expected);
      expect(reply.text, path).to.not.include('disk on fire');
    }
  });

  it('when an unexpected error happens, then it is logged once as JSON with its stack', async () => {
    const before = api.logger.lines.length;
    await api.get('/api/group/abo?group=g');
    const failures = api.logger.lines.slice(before).filter((line) => line.event === 'request failed');
    expect(failures).to.have.length(1);
    expect(failures[0]).to.include({
      level: 'error',
      error: 'disk on fire at /var/db',
      path: '/api/group/abo',
    });
    expect(failures[0]?.['stack']).to.be.a('string').and.include('disk on fire');
  });
});

describe('HTTP transport, when the store is unreachable', () => {
  let api: TestServer;
  before(async () => {
    // Memory in the Mongo pass too: the repositories are replaced by failing stubs anyway.
    api = await startTestServer(
      {},
      (container) => failingStore(container, () => new StoreUnavailableError()),
      { store: 'memory' },
    );
  });
  after(async () => {
    await api.close();
  });

  it('then 503 JSON {message} with Retry-After on every route', async () => {
    const reply = await api.get('/api/actions/current_state?group=g');
    expect(reply.status).to.equal(503);
    expect(reply.headers.get('retry-after')).to.equal('5');
    expect(reply.json()).to.deep.equal({ message: 'The data store is unavailable, try again shortly' });
    const chart = await api.get('/api/historyChart/all/u');
    expect(chart.status).to.equal(503);
    expect(chart.json()).to.have.all.keys('message');
    const email = await api.call('POST', '/api/changeEmail/u', { json: { newEmail: 'a@b.example' } });
    expect(email.status).to.equal(503);
    expect(email.json()).to.have.all.keys('message');
  });
});

describe('HTTP server lifecycle', () => {
  it('when started with demo, then the demo greenhouse is served', async () => {
    const running = await startServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', STORE: 'memory' }), {
      demo: true,
      logger: new CapturingLogger(),
    });
    try {
      const reply = await fetch(`${running.url}/api/actions/current_state?group=demo`);
      const { message } = (await reply.json()) as { message: { object: string }[] };
      expect(message.map((action) => action.object)).to.have.members([
        'led_1',
        'pump_1',
        'ventilator_1',
        'ventilator_2',
      ]);
    } finally {
      await running.close();
    }
  });

  it('when the port is taken, then startServer rejects', async () => {
    const first = await startTestServer();
    try {
      const port = new URL(first.url).port;
      await expect(
        startServer(loadConfig({ PORT: port, HOST: '127.0.0.1', STORE: 'memory' }), {
          logger: new CapturingLogger(),
        }),
      ).to.be.rejectedWith(/EADDRINUSE/u);
    } finally {
      await first.close();
    }
  });

  it('when closed during a request, then that request is answered and new connections are refused', async () => {
    const host = new FakeCodeHost();
    const apiUrl = await host.start();
    // The code host never answers; it tells when the server's request reached it, so the close below
    // surely happens during that request (a fixed pause lost the race on a loaded machine).
    let reached: () => void = () => {};
    const atHost = new Promise<void>((resolve) => {
      reached = resolve;
    });
    host.handler = () => reached();
    const api = await startTestServer({
      CODE_HOST_API_URL: apiUrl,
      CODE_HOST_REPOSITORY: 'o/r',
      CODE_HOST_TIMEOUT_MS: '300',
    });
    try {
      const inFlight = api.get('/api/notification/latestdata/github');
      await atHost;
      const closed = api.close();
      const reply = await inFlight;
      expect(reply.status).to.equal(500);
      await closed;
      await expect(fetch(`${api.url}/`)).to.be.rejectedWith(TypeError);
    } finally {
      await host.stop();
    }
  });
});
