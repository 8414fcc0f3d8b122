import { CreateAccessKey } from '@hortus/core';
import { expect, type Reply, startTestServer, type TestServer } from './harness.js';

const PASSWORD = 'Tomato#Bed42';

/** A browser's cookie jar, as far as this server's one cookie goes. */
class CookieJar {
  private cookie: string | undefined;

  take(reply: Reply): void {
    for (const line of reply.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (name.trim() !== 'hortus_session') continue;
      this.cookie = /max-age=0/iu.test(line) || value === '' ? undefined : `${name.trim()}=${value.trim()}`;
    }
  }

  get header(): Record<string, string> {
    return this.cookie === undefined ? {} : { cookie: this.cookie };
  }
}

/**
 * The web client as served from Hortus's own origin: same-origin requests, which browsers mark
 * `Sec-Fetch-Site: same-origin` and give an Origin on everything but GET.
 */
function browser(api: TestServer, jar: CookieJar) {
  return async (method: string, path: string, json?: unknown): Promise<Reply> => {
    const reply = await api.call(method, path, {
      headers: {
        'sec-fetch-site': 'same-origin',
        ...(method === 'GET' ? {} : { origin: api.url }),
        ...jar.header,
      },
      ...(json === undefined ? {} : { json }),
    });
    jar.take(reply);
    return reply;
  };
}

describe('the session cookie (AUTH=on, SIGNUP=open): the unmodified web client with access control on', () => {
  let api: TestServer;
  let group: string;
  let otherGroup: string;
  before(async () => {
    api = await startTestServer({ AUTH: 'on', SIGNUP: 'open', AUTH_CACHE_MS: '0' });
    group = api.unique('greenhouse');
    otherGroup = api.unique('neighbour');
    for (const name of [group, otherGroup]) {
      await api.seed.group(name);
      await api.seed.action(name, 'pump_1');
      await api.seed.device(`${name}-box`, name);
      await api.seed.notification(name, '2025-06-15T10:00:00.000Z');
    }
  });
  after(() => api.close());

  async function signUpAndLogIn(jar: CookieJar): Promise<{ reply: Reply; userId: string; token: string }> {
    const as = browser(api, jar);
    const email = `${api.unique('ada')}@example.org`;
    const created = await as('POST', '/api/users', {
      firstName: 'Ada',
      lastName: 'Grower',
      email,
      password: PASSWORD,
      group,
    });
    expect(created.status, created.text).to.equal(201);
    const reply = await as('POST', '/api/auth', { email, password: PASSWORD });
    expect(reply.status, reply.text).to.equal(200);
    const { userId, token } = (reply.json() as { data: { userId: string; token: string } }).data;
    return { reply, userId, token };
  }

  /** What the client's pages ask for, in the order it asks (dashboard, actions, history, devices, notifications). */
  const clientReads = (g: string, userId: string): string[] => [
    `/api/data/latestdata/all?groupId=${g}`,
    `/api/group/abo?group=${g}`,
    `/api/data/tem?groupId=${g}&count=20000`,
    `/api/actions/current_state?group=${g}`,
    `/api/historyChart/all/${userId}`,
    `/api/data/all/temperature?groupId=${g}&count=100`,
    `/api/devices?group=${g}`,
    `/api/notification/latestdata/notifications?groupId=${g}`,
  ];

  it('when the sign-up form asks whether the group exists before anyone logged in, then it is told (sign-up is open and would tell the same); other data stays 401', async () => {
    const known = await api.get(`/api/group/checkGroup?group=${group}`);
    expect(known.status, known.text).to.equal(200);
    expect(known.json()).to.deep.equal({ exists: true });
    expect((await api.get('/api/group/checkGroup?group=nowhere')).json()).to.deep.equal({ exists: false });
    expect((await api.get(`/api/group/abo?group=${group}`)).status).to.equal(401);
  });

  it('when a user logs in, then the answer sets hortus_session: HttpOnly, SameSite=Strict, Path=/api, no Max-Age, not Secure over plain HTTP', async () => {
    const { reply, token } = await signUpAndLogIn(new CookieJar());
    const [cookie, ...more] = reply.headers.getSetCookie();
    expect(more).to.deep.equal([]);
    expect(cookie).to.equal(`hortus_session=${token}; Path=/api; HttpOnly; SameSite=Strict`);
  });

  it("when the client's pages load with only the cookie, then every data request answers (no 401, no 5xx); without it, 401", async () => {
    const jar = new CookieJar();
    const { userId } = await signUpAndLogIn(jar);
    const as = browser(api, jar);
    // A new chart first: the chart list of a user without charts is the original's 404.
    const chart = await as('POST', `/api/historyChart/update/${userId}`, { chartName: 'Chart 1' });
    expect(chart.status, chart.text).to.be.oneOf([200, 201]);
    for (const path of clientReads(group, userId)) {
      const reply = await as('GET', path);
      expect(reply.status, `${path}: ${reply.text}`).to.equal(200);
      expect(reply.headers.get('vary') ?? '', path).to.match(/Cookie/u);
    }
    const switched = await as('GET', `/api/actions/?group=${group}&object=pump_1&value=on`);
    expect(switched.status, switched.text).to.equal(200);
    const state = (await as('GET', `/api/actions/current_state?group=${group}`)).json() as {
      message: { object: string; value: string }[];
    };
    expect(state.message.find((action) => action.object === 'pump_1')?.value).to.equal('on');
    const ignored = await as('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
      time: '2025-06-15T10:00:00.000Z',
    });
    expect(ignored.status, ignored.text).to.equal(200);

    for (const path of clientReads(group, userId)) {
      const reply = await api.get(path);
      expect(reply.status, path).to.equal(401);
    }
  });

  it("when the cookie's user asks for another group's data, then 403, exactly as with the Bearer log-in token", async () => {
    const jar = new CookieJar();
    const { userId, token } = await signUpAndLogIn(jar);
    const as = browser(api, jar);
    for (const path of [
      `/api/devices?group=${otherGroup}`,
      `/api/actions/?group=${otherGroup}&object=pump_1&value=on`,
    ]) {
      expect((await as('GET', path)).status, path).to.equal(403);
      const bearer = await api.call('GET', path, { headers: { authorization: `Bearer ${token}` } });
      expect(bearer.status, path).to.equal(403);
    }
    const bearerOwn = await api.call('GET', `/api/devices?group=${group}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bearerOwn.status).to.equal(200);
    const foreignCharts = await as('GET', `/api/historyChart/all/not-${userId}`);
    expect(foreignCharts.status).to.equal(403);
  });

  it('when a change comes with the cookie from another origin of the same site, or cross-site, then 403 and nothing changes', async () => {
    const jar = new CookieJar();
    await signUpAndLogIn(jar);
    const path = `/api/actions/?group=${group}&object=pump_1&value=off`;
    const before = (await browser(api, jar)('GET', `/api/actions/current_state?group=${group}`)).text;
    for (const headers of [
      { 'sec-fetch-site': 'same-site', origin: 'http://127.0.0.1:3999' },
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:3999' },
    ]) {
      const reply = await api.call('GET', path, { headers: { ...headers, ...jar.header } });
      expect(reply.status, JSON.stringify(headers)).to.equal(403);
    }
    const after = (await browser(api, jar)('GET', `/api/actions/current_state?group=${group}`)).text;
    expect(after).to.equal(before);
  });

  it('when the user logs out, then the cookie is cleared and the session ends, for the cookie and the Bearer token alike', async () => {
    const jar = new CookieJar();
    const { token } = await signUpAndLogIn(jar);
    const stolen = { ...jar.header };
    const as = browser(api, jar);
    const out = await as('POST', '/api/auth/logout');
    expect(out.status, out.text).to.equal(200);
    expect(out.json()).to.deep.equal({ message: 'Logged out' });
    const [cleared] = out.headers.getSetCookie();
    expect(cleared).to.match(/^hortus_session=; Path=\/api; HttpOnly; SameSite=Strict; Max-Age=0/u);
    expect(jar.header).to.deep.equal({});

    const replayed = await api.call('GET', `/api/devices?group=${group}`, {
      headers: { ...stolen, 'sec-fetch-site': 'same-origin' },
    });
    expect(replayed.status).to.equal(401);
    expect(replayed.json()).to.deep.equal({ message: 'The session has ended: log in again' });
    expect(replayed.headers.getSetCookie()[0]).to.match(/Max-Age=0/u);
    const bearer = await api.call('GET', `/api/devices?group=${group}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bearer.status).to.equal(401);
    const again = await api.call('POST', '/api/auth/logout', { headers: { origin: api.url } });
    expect(again.status).to.equal(200);
  });

  it('when an access key is put in the cookie, then it is not taken: keys travel in the header only', async () => {
    const { secret } = await api.container
      .get(CreateAccessKey)
      .execute({ name: 'script', kind: 'admin', groups: [] });
    const reply = await api.call('GET', `/api/devices?group=${group}`, {
      headers: { cookie: `hortus_session=${secret}` },
    });
    expect(reply.status).to.equal(401);
  });

  it('when /metrics is asked with a log-in token or the cookie while keys are required, then 403: only admin keys', async () => {
    const jar = new CookieJar();
    const { token } = await signUpAndLogIn(jar);
    expect((await browser(api, jar)('GET', '/metrics')).status).to.equal(403);
    const bearer = await api.call('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect(bearer.status).to.equal(403);
    const { secret } = await api.container
      .get(CreateAccessKey)
      .execute({ name: 'ops', kind: 'admin', groups: [] });
    const admin = await api.call('GET', '/metrics', { headers: { authorization: `Bearer ${secret}` } });
    expect(admin.status).to.equal(200);
  });
});

describe('the session cookie behind a TLS-terminating proxy', () => {
  it('when the proxy says the request came over HTTPS, then the cookie is Secure', async () => {
    const api = await startTestServer({ AUTH: 'on', SIGNUP: 'open', TRUST_PROXY: 'on' });
    try {
      const group = api.unique('greenhouse');
      await api.seed.group(group);
      const email = `${api.unique('ada')}@example.org`;
      const created = await api.call('POST', '/api/users', {
        json: { firstName: 'Ada', lastName: 'Grower', email, password: PASSWORD, group },
      });
      expect(created.status, created.text).to.equal(201);
      const reply = await api.call('POST', '/api/auth', {
        json: { email, password: PASSWORD },
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(reply.headers.getSetCookie()[0]).to.match(/; Secure$/u);
    } finally {
      await api.close();
    }
  });
});
