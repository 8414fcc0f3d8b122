import { CONSOLE_CSP } from '@hortus/http-koa';
import { expect, startTestServer, type TestServer } from './harness.js';

/** The console's build that `pnpm install` made (packages/console/dist), served by the real composition. */
describe('the console under /console/ (packages/console)', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ AUTH: 'on' });
  });
  after(async () => {
    await api.close();
  });

  it('when /console/ or a page of it is asked, then its index.html under a CSP without unsafe-inline, without a key; GET / keeps its answer', async () => {
    for (const path of ['/console/', '/console/overview']) {
      const reply = await api.get(path);
      expect(reply.status, path).to.equal(200);
      expect(reply.text, path).to.match(/<script type="module" src="main\.[0-9a-f]{10}\.js"><\/script>/u);
      expect(reply.text, path).to.not.match(/<script>|<style|style=/u);
      expect(reply.headers.get('content-security-policy'), path).to.equal(CONSOLE_CSP);
      expect(reply.headers.get('cache-control'), path).to.equal('no-cache');
    }
    expect(CONSOLE_CSP).to.not.contain('unsafe-inline');
    expect(CONSOLE_CSP).to.contain("default-src 'none'");
    expect((await api.get('/')).text).to.equal('Running...');
    const bare = await fetch(`${api.url}/console`, { redirect: 'manual' });
    expect(bare.status).to.equal(308);
    expect(bare.headers.get('location')).to.equal('/console/');
  });

  it('when the page names its script and style sheet, then both are served and cached for a year', async () => {
    const page = (await api.get('/console/')).text;
    const names = [...page.matchAll(/(?:src|href)="(main\.[0-9a-f]{10}\.(?:js|css))"/gu)].map(
      (match) => match[1],
    );
    expect(names).to.have.length(2);
    for (const name of names) {
      const reply = await api.get(`/console/${name ?? ''}`);
      expect(reply.status, name).to.equal(200);
      expect(reply.headers.get('cache-control'), name).to.equal('public, max-age=31536000, immutable');
    }
  });

  it('when access control is on, then status.json says so to anyone, and the start log names the console', async () => {
    const reply = await api.get('/console/status.json');
    expect(reply.status).to.equal(200);
    expect(JSON.parse(reply.text)).to.deep.equal({ accessControl: true });
    const listening = api.logger.lines.find((line) => line.event === 'listening');
    expect(listening?.['console']).to.equal(`${api.url}/console/`);
  });

  it('when a file the build did not make or a path out of it is asked, then 404', async () => {
    for (const path of [
      '/console/package.json',
      '/console/main.0000000000.js',
      '/console/..%2f..%2fpackage.json',
      '/console/index.html.map',
    ]) {
      const reply = await api.get(path);
      expect(reply.status, path).to.equal(404);
      expect(reply.text, path).to.not.contain('"name"');
    }
  });
});
