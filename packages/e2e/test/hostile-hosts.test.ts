import { CreateAccessKey } from '@hortus/core';
import { hostAllowed, httpSettingsFromEnv } from '@hortus/http-koa';
import { expect, startTestServer } from './harness.js';
import { portOf, raw } from './raw-requests.js';

/* Hostile clients at the HTTP edge, part two: foreign Host names (DNS rebinding) and shared caches. */

describe('Hostile clients at the HTTP edge: hosts and caches', function () {
  this.timeout(20_000);

  describe('DNS rebinding: ALLOWED_HOSTS', () => {
    it('when the Host is a foreign name, then 421 JSON; localhost names, IP addresses and health checks pass', async () => {
      const api = await startTestServer();
      try {
        const port = portOf(api.url);
        const foreign = await raw(api.url, 'GET', '/api/group/all', { host: `rebind.example:${port}` });
        expect(foreign.status).to.equal(421);
        expect(JSON.parse(foreign.text)).to.deep.equal({
          message: 'Host "rebind.example" is not served here (see ALLOWED_HOSTS)',
        });
        for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'app.localhost']) {
          expect((await raw(api.url, 'GET', '/', { host })).status, host).to.equal(200);
        }
        expect((await raw(api.url, 'GET', '/healthz', { host: 'rebind.example' })).status).to.equal(200);
      } finally {
        await api.close();
      }
    });

    it('when ALLOWED_HOSTS names hosts or is *, then those pass', async () => {
      const named = await startTestServer({ ALLOWED_HOSTS: 'greenhouse.example.org, *.farm.example' });
      const open = await startTestServer({ ALLOWED_HOSTS: '*' });
      try {
        expect((await raw(named.url, 'GET', '/', { host: 'greenhouse.example.org' })).status).to.equal(200);
        expect((await raw(named.url, 'GET', '/', { host: 'north.farm.example:8080' })).status).to.equal(200);
        expect((await raw(named.url, 'GET', '/', { host: 'localhost' })).status).to.equal(421);
        expect((await raw(open.url, 'GET', '/', { host: 'anything.example' })).status).to.equal(200);
      } finally {
        await Promise.all([named.close(), open.close()]);
      }
    });

    it('when hosts are compared, then ports, brackets, case and a trailing dot do not matter', () => {
      const allowed = hostAllowed(['greenhouse.example.org', '*.localhost']);
      expect(allowed('GreenHouse.Example.org.:443')).to.equal(true);
      expect(allowed('a.b.localhost')).to.equal(true);
      expect(allowed('localhost.evil.example')).to.equal(false);
      expect(allowed('[fe80::1]:80')).to.equal(true);
      expect(allowed('')).to.equal(true);
      expect(() => httpSettingsFromEnv({ ALLOWED_HOSTS: 'bad host' })).to.throw(/ALLOWED_HOSTS/u);
    });

    it('when a Host is not a host[:port] (RFC 3986), then it is refused, whatever allowed text it holds', () => {
      const allowed = hostAllowed(['greenhouse.example.org']);
      for (const host of [
        '[::1]attacker.example',
        '[::1]:80attacker.example',
        '[::1].attacker.example',
        '[not-an-address]',
        '[::1',
        '::1',
        '127.0.0.1@attacker.example',
        'attacker.example/127.0.0.1',
        'attacker.example:80:80',
        'greenhouse.example.org:http',
        'greenhouse.example.org attacker.example',
        'greenhouse.example.org\\attacker.example',
      ]) {
        expect(allowed(host), host).to.equal(false);
      }
      for (const host of [
        '[::1]',
        '[::1]:8080',
        '[::ffff:127.0.0.1]:80',
        '127.0.0.1:8080',
        'greenhouse.example.org:',
      ]) {
        expect(allowed(host), host).to.equal(true);
      }
    });
  });

  describe('caching of authenticated answers', () => {
    it('when keys are required, then answers are private and vary by Authorization and Origin', async () => {
      const api = await startTestServer();
      try {
        const group = api.unique('private');
        await api.seed.group(group);
        const { secret } = await api.container
          .get(CreateAccessKey)
          .execute({ name: 'admin', kind: 'admin', groups: [] });
        const authorization = `Bearer ${secret}`;
        const tagged = await api.call('GET', `/api/group/abo?group=${group}`, { headers: { authorization } });
        expect(tagged.status).to.equal(200);
        expect(tagged.headers.get('cache-control')).to.equal('private, no-cache');
        expect(tagged.headers.get('vary'))
          .to.match(/Authorization/u)
          .and.match(/Origin/u);
        const plain = await api.call('GET', '/api/group/all', { headers: { authorization } });
        expect(plain.headers.get('cache-control')).to.equal('private');
        const refused = await api.get('/api/group/all');
        expect(refused.status).to.equal(401);
        expect(refused.headers.get('cache-control')).to.equal('private');
        expect(refused.headers.get('vary')).to.match(/Authorization/u);
      } finally {
        await api.close();
      }
    });
  });
});
