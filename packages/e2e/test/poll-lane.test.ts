import { CreateAccessKey, CreateUser } from '@hortus/core';
import { expect, startTestServer, type TestServer } from './harness.js';
import {
  laneAnswers,
  type LaneTwin,
  requestLines,
  requestSeries,
  see,
  type Seen,
  startLaneTwin,
} from './lane-twin.js';

/**
 * The poll lane answers the polled routes in front of Koa. Whatever it answers must be exactly what Koa
 * would: every request here goes to the server as configured and to a twin on the same store and access
 * control with the lane turned off, and the two answers (status, headers, body), log lines and metrics must
 * be the same. The lane's own counter shows which requests it took.
 */

describe('The poll lane', function () {
  this.timeout(30_000);
  const origin = 'http://localhost:3000';
  let api: TestServer;
  let twin: LaneTwin;
  let group: string;

  before(async () => {
    // The limiter stays on in both, as in production, with room for every request here.
    api = await startTestServer({ RATE_LIMIT_PER_MINUTE: '100000' });
    twin = await startLaneTwin(api);
    group = api.unique('lane');
    await api.seed.group(group, { tempMin: 15 });
    await api.seed.action(group, 'pump_1');
    await api.seed.readings([
      { group, topic: 'esp/air/temperature', value: 21.5, time: '2025-06-15T12:00:00.000Z' },
      { group, topic: 'esp/soil/moisture', value: 40, time: '2025-06-15T12:01:00.000Z' },
    ]);
  });

  after(async () => {
    await twin?.close();
    await api?.close();
  });

  /** Sends one request to the twin (warming the shared access caches first) and then to the server. */
  async function compare(path: string, headers: Record<string, string> = {}): Promise<Seen> {
    const sending = { headers, alsoVarying: ['connection'] };
    const viaKoa = await see(twin.url, path, sending);
    const viaServer = await see(api.url, path, sending);
    expect(viaServer, `${path} ${JSON.stringify(headers)}`).to.deep.equal(viaKoa);
    return viaServer;
  }

  const polls = (name: string): string[] => [
    `/api/actions/current_state?group=${name}`,
    `/api/data/latestdata/All?groupId=${name}`,
    `/api/group/abo?group=${name}`,
    `/api/data/latestdata/temperature?groupId=${name}`,
    `/api/notification/latestdata/notifications?groupId=${name}`,
  ];

  it('when clients poll without keys in use, then the lane answers 200s and 304s exactly as Koa does', async () => {
    const before = laneAnswers(twin.laneMetrics, 'poll');
    for (const path of polls(group)) {
      const first = await compare(path, { origin });
      expect(first.status).to.equal(200);
      const etag = first.headers['etag'] ?? '';
      expect(etag).to.match(/^W\//u);
      expect((await compare(path, { origin, 'if-none-match': etag })).status).to.equal(304);
      await compare(path, { 'if-none-match': `W/"stale", ${etag}`, 'x-request-id': 'poll-42' });
      await compare(path, { origin: 'https://elsewhere.example' });
      await compare(path.replace('/api/', '/API/'), {});
    }
    // 5 requests to each of 5 routes, all answered by the lane.
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(25);
    expect(requestLines(api.logger).slice(-25)).to.deep.equal(requestLines(twin.logger).slice(-25));
  });

  it('when queries are written in odd ways, then the answers match whoever gives them', async () => {
    const queries = [
      `group=${group}&x=1&x=2`,
      `__proto__=x&group=${group}`,
      `group=${group}%20`,
      `group=+${group}`,
      `group=%2${group}`,
      'group',
      'group=',
      `group=${group}&`,
      `&group=${group}`,
      `group=${group}#fragment`,
    ];
    for (const query of queries) await compare(`/api/actions/current_state?${query}`);
  });

  it('when the polled route fails (a group that does not exist), then the lane answers the error as Koa does', async () => {
    const before = laneAnswers(twin.laneMetrics, 'poll');
    const missing = api.unique('missing');
    for (const headers of [{}, { origin }, { 'x-request-id': 'poll-43' }]) {
      const failed = await compare(`/api/group/abo?group=${missing}`, headers);
      expect(failed.status).to.equal(404);
    }
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(3);
    expect(requestLines(api.logger).slice(-3)).to.deep.equal(requestLines(twin.logger).slice(-3));
  });

  it('when a poll is unusual, then Koa answers it and the answers still match', async () => {
    const before = laneAnswers(twin.laneMetrics, 'poll');
    const missing = api.unique('missing');
    const unusual: [string, Record<string, string>][] = [
      [`/api/group/abo?group=${missing}`, { 'if-none-match': '*' }],
      [`/api/actions/current_state?group=${group}`, { 'if-none-match': '*' }],
      ['/api/actions/current_state', {}],
      [`/api/actions/current_state?group=${group}&group=other`, {}],
      [`/api/actions/current_state?group=${'x'.repeat(500)}`, {}],
      [`/api/actions/current_state?group=${group}`, { host: 'evil.example' }],
      [`/api/actions/current_state?group=${group}`, { authorization: 'Bearer hk_not-a-key' }],
      [`/api/actions/current_state?group=${group}${'&x='.repeat(100)}`, {}],
    ];
    for (const [path, headers] of unusual) {
      await compare(path, headers);
      expect(laneAnswers(twin.laneMetrics, 'poll') - before, `${path} ${JSON.stringify(headers)}`).to.equal(
        0,
      );
    }
  });

  it('when a log-in token is sent, then the lane answers with Vary: Authorization and private caching, as Koa does', async () => {
    const email = `${api.unique('lane')}@example.org`;
    await api.container
      .get(CreateUser)
      .execute({ firstName: 'Lane', lastName: 'Tester', email, group, password: 'Correct-h0rse' });
    const login = await fetch(`${twin.url}/api/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'Correct-h0rse' }),
    });
    const { token } = ((await login.json()) as { data: { token: string } }).data;
    const before = laneAnswers(twin.laneMetrics, 'poll');
    const authorization = `Bearer ${token}`;
    for (const path of polls(group)) {
      const first = await compare(path, { origin, authorization });
      expect(first.headers['cache-control']).to.equal('private, no-cache');
      await compare(path, { authorization, 'if-none-match': first.headers['etag'] ?? '' });
    }
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(10);
    // The same token in the session cookie (the lane's), and cookies without a session (Koa's, which drops
    // them), while keys are not required: every answer private, as Koa's.
    const path = `/api/actions/current_state?group=${group}`;
    const cookies = [`hortus_session=${token}`, 'hortus_session=hk_not-a-key', 'hortus_session=a.b.c'];
    const laneBefore = laneAnswers(twin.laneMetrics, 'poll');
    for (const cookie of cookies) {
      expect((await compare(path, { cookie })).headers['cache-control']).to.match(/^private/u);
      await compare(path, { cookie, origin });
    }
    expect(laneAnswers(twin.laneMetrics, 'poll') - laneBefore).to.equal(2);
  });

  it('when the session cookie carries a log-in token, or one that has ended, while keys are not required, then the answers match Koa', async () => {
    const email = `${api.unique('cookie')}@example.org`;
    await api.container
      .get(CreateUser)
      .execute({ firstName: 'Cookie', lastName: 'Tester', email, group, password: 'Correct-h0rse' });
    const login = await fetch(`${twin.url}/api/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'Correct-h0rse' }),
    });
    const { token } = ((await login.json()) as { data: { token: string } }).data;
    const before = laneAnswers(twin.laneMetrics, 'poll');
    for (const path of polls(group)) {
      const served = await compare(path, { origin, cookie: `hortus_session=${token}` });
      expect(served.headers['vary']).to.equal('Origin, Authorization, Cookie');
      expect(served.headers['cache-control']).to.equal('private, no-cache');
      const ended = await compare(path, { cookie: 'hortus_session=a.b.c' });
      expect(ended.headers['set-cookie']).to.match(/^hortus_session=;/u);
    }
    // The lane serves the valid cookie's polls; an ended session is Koa's to end.
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(5);
  });

  it('when keys are in use, then a key that may read the group is served by the lane and any other is left to Koa', async () => {
    const keys = api.container.get(CreateAccessKey);
    const reader = await keys.execute({ name: 'reader', kind: 'client', groups: [group] });
    const stranger = await keys.execute({ name: 'stranger', kind: 'client', groups: ['elsewhere'] });
    // "Are keys in use" was answered before the first key existed: let the cached answer expire.
    api.clock.advance(60_000);
    const path = `/api/actions/current_state?group=${group}`;
    await compare(path, { authorization: `Bearer ${reader.secret}` });
    const before = laneAnswers(twin.laneMetrics, 'poll');
    const served = await compare(path, { origin, authorization: `Bearer ${reader.secret}` });
    expect(served.status).to.equal(200);
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(1);
    expect((await compare(path, { authorization: `Bearer ${stranger.secret}` })).status).to.equal(403);
    expect((await compare(path, {})).status).to.equal(401);
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(1);
    const keyIds = requestLines(api.logger)
      .slice(-4)
      .map((line) => (line as { keyId?: string }).keyId);
    expect(keyIds).to.deep.equal([reader.key.id, reader.key.id, stranger.key.id, undefined]);
  });

  it('when keys are in use and a key is sent as the session cookie, then Koa refuses it with 401 and the lane leaves it to Koa', async () => {
    const reader = await api.container
      .get(CreateAccessKey)
      .execute({ name: 'cookie-reader', kind: 'client', groups: [group] });
    api.clock.advance(60_000);
    const path = `/api/actions/current_state?group=${group}`;
    // The key's lookup is cached by its header use, so the lane could know it without waiting.
    await compare(path, { authorization: `Bearer ${reader.secret}` });
    const before = laneAnswers(twin.laneMetrics, 'poll');
    const cookie = `hortus_session=${reader.secret}`;
    const refused = await compare(path, { cookie });
    expect(refused.status).to.equal(401);
    expect(refused.headers['set-cookie']).to.match(/^hortus_session=;/u);
    expect((await compare(path, { cookie, origin })).status).to.equal(401);
    expect(laneAnswers(twin.laneMetrics, 'poll') - before).to.equal(0);
  });

  it('when the lane and Koa both count, then the metrics of the polled routes are the same', () => {
    const polled = /route="\/api\/(actions\/current_state|data\/latestdata|group\/abo|notification)/u;
    expect(requestSeries(twin.laneMetrics, polled)).to.not.deep.equal([]);
    expect(requestSeries(twin.laneMetrics, polled)).to.deep.equal(requestSeries(twin.metrics, polled));
  });
});
