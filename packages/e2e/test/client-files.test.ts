import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CLIENT_CSP, httpSettingsFromEnv } from '@hortus/http-koa';
import { expect, startTestServer, type TestServer } from './harness.js';

const PAGE =
  '<!doctype html><html><head><script defer src="/static/js/main.0214b58c.js"></script></head></html>';
const SECRET = 'the token-signing key';

/** A request sent byte for byte as written: fetch would normalise `..` away before it leaves. */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ host: hostname, port, path, method: 'GET' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

describe('serving a web client build (CLIENT_DIR, serve --client)', () => {
  let outside: string;
  let build: string;
  let api: TestServer;
  before(async () => {
    outside = mkdtempSync(join(tmpdir(), 'hortus-client-'));
    build = join(outside, 'build');
    mkdirSync(join(build, 'static', 'js'), { recursive: true });
    writeFileSync(join(build, 'index.html'), PAGE);
    writeFileSync(join(build, 'static', 'js', 'main.0214b58c.js'), 'console.log("client")');
    writeFileSync(join(build, 'logo.png'), 'png');
    writeFileSync(join(build, '.env'), SECRET);
    writeFileSync(join(outside, 'secret.txt'), SECRET);
    symlinkSync(join(outside, 'secret.txt'), join(build, 'linked.txt'));
    api = await startTestServer({ CLIENT_DIR: build, AUTH: 'on' });
  });
  after(async () => {
    await api.close();
    rmSync(outside, { recursive: true, force: true });
  });

  it('when / or a page of the client is asked, then index.html, revalidated every time, under the client CSP, without a key', async () => {
    for (const path of ['/', '/dashboard', '/history/chart-1', '/index.html']) {
      const reply = await api.get(path);
      expect(reply.status, path).to.equal(200);
      expect(reply.text, path).to.equal(PAGE);
      expect(reply.headers.get('content-type'), path).to.equal('text/html; charset=utf-8');
      expect(reply.headers.get('cache-control'), path).to.equal('no-cache');
      expect(reply.headers.get('content-security-policy'), path).to.equal(DEFAULT_CLIENT_CSP);
    }
    expect(DEFAULT_CLIENT_CSP)
      .to.contain("connect-src 'self' https://api.github.com;")
      .and.to.contain("frame-ancestors 'none'");
  });

  it('when a hashed asset is asked, then it is cached for a year; other files are revalidated, with 304 on a match', async () => {
    const script = await api.get('/static/js/main.0214b58c.js');
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    const logo = await api.get('/logo.png');
    expect(logo.headers.get('cache-control')).to.equal('no-cache');
    const tag = logo.headers.get('etag') ?? '';
    expect(tag).to.not.equal('');
    const again = await api.call('GET', '/logo.png', { headers: { 'if-none-match': tag } });
    expect(again.status).to.equal(304);
  });

  it('when a file that is not there, a directory, a dot-file or a path out of the build is asked, then 404 and nothing outside is read', async () => {
    for (const path of [
      '/static/js/main.00000000.js',
      '/.env',
      '/linked.txt',
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/static/%2e%2e/%2e%2e/secret.txt',
      '/static/..%2f..%2fsecret.txt',
      '/%2e%2e%5csecret.txt',
      '/%00.html',
      '/%E0%A4%A.js',
    ]) {
      const reply = await rawGet(api.url, path);
      expect(reply.body, path).to.not.contain(SECRET);
      expect(reply.status, path).to.be.oneOf([400, 404]);
    }
    const directory = await api.get('/static/js');
    expect(directory.text).to.equal(PAGE);
  });

  it('when the API, health or metrics are asked, then the server answers them, not the build; keys are still required', async () => {
    expect((await api.get('/api')).text).to.equal('Running API...');
    expect((await api.get('/healthz')).json()).to.deep.equal({ status: 'ok' });
    expect((await api.get('/api/devices?group=g')).status).to.equal(401);
    expect((await api.get('/api/no/such/route')).status).to.equal(401);
    expect((await api.call('POST', '/', { json: {} })).status).to.not.equal(200);
  });

  it('when CLIENT_DIR has no index.html or is no directory, then the configuration names the problem', () => {
    expect(() => httpSettingsFromEnv({ CLIENT_DIR: join(outside, 'nowhere') })).to.throw(/CLIENT_DIR/u);
    expect(() => httpSettingsFromEnv({ CLIENT_DIR: join(build, 'static') })).to.throw(/index\.html/u);
    expect(httpSettingsFromEnv({ CLIENT_DIR: build, CLIENT_CSP: "default-src 'self'" }).client).to.deep.equal(
      {
        dir: build,
        csp: "default-src 'self'",
      },
    );
  });
});
