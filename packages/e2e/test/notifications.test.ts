import { eventually, expect, FakeCodeHost, startTestServer, type TestServer } from './harness.js';

type Notification = { _id: string; group: string; time: string; message: string; ignore: string };

describe('HTTP /api/notification', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  async function seeded(): Promise<string> {
    const group = api.unique('greenhouse');
    await api.seed.notification(group, '2025-06-15T08:00:00.000Z', 'first');
    await api.seed.notification(group, '2025-06-15T09:00:00.000Z', 'second');
    await api.seed.notification(group, '2025-06-15T10:00:00.000Z', 'third');
    return group;
  }
  const open = async (group: string): Promise<string[]> =>
    (
      (await api.get(`/api/notification/latestdata/notifications?groupId=${group}`)).json() as Notification[]
    ).map((notification) => notification.message);

  describe('GET /latestdata/notifications', () => {
    it('when the group has notifications, then a bare array, newest record first, with _id', async () => {
      const group = await seeded();
      const reply = await api.get(`/api/notification/latestdata/notifications?groupId=${group}`);
      expect(reply.status).to.equal(200);
      const list = reply.json() as Notification[];
      expect(list.map((notification) => notification.message)).to.deep.equal(['third', 'second', 'first']);
      expect(list[0])
        .to.include({ group, ignore: 'false', time: '2025-06-15T10:00:00.000Z' })
        .and.to.have.property('_id');
    });

    it('when groupId is missing, then 400 {message}', async () => {
      const reply = await api.get('/api/notification/latestdata/notifications');
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'groupId is required' });
    });
  });

  describe('POST /notifications/:id/ack', () => {
    it('when a notification is acknowledged, then the answer and the list carry who and when, and it stays listed', async () => {
      const group = await seeded();
      const [newest] = (
        await api.get(`/api/notification/latestdata/notifications?groupId=${group}`)
      ).json() as Notification[];

      const reply = await api.call(
        'POST',
        `/api/notification/notifications/${newest?._id ?? ''}/ack?groupId=${group}`,
      );

      expect(reply.status).to.equal(200);
      const acknowledged = reply.json() as Notification & {
        acknowledged: { at: string; by: { kind: string } };
      };
      expect(acknowledged).to.include({ _id: newest?._id, message: 'third', ignore: 'false' });
      expect(acknowledged.acknowledged.at).to.match(/^\d{4}-\d\d-\d\dT/u);
      const listed = (
        await api.get(`/api/notification/latestdata/notifications?groupId=${group}`)
      ).json() as (Notification & { acknowledged?: unknown })[];
      expect(listed.map((n) => n.message)).to.deep.equal(['third', 'second', 'first']);
      expect(listed[0]?.acknowledged).to.deep.equal(acknowledged.acknowledged);
      expect(listed[1]).to.not.have.property('acknowledged');
    });

    it('when the id is unknown or of another group, then 404 {message}', async () => {
      const group = await seeded();
      const reply = await api.call(
        'POST',
        `/api/notification/notifications/0123456789abcdef01234567/ack?groupId=${group}`,
      );
      expect(reply.status).to.equal(404);
      expect(reply.json()).to.deep.equal({ message: 'Notification not found' });
    });
  });

  describe('POST /notifications/ignore', () => {
    it('when times are given, then every match is ignored and the answer is 200 with an empty body', async () => {
      const group = await seeded();
      const reply = await api.call('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
        json: { times: ['2025-06-15T08:00:00.000Z', '2025-06-15T10:00:00.000Z', '2020-01-01T00:00:00.000Z'] },
      });
      expect(reply.status).to.equal(200);
      expect(reply.text).to.equal('');
      expect(await open(group)).to.deep.equal(['second']);
    });

    it('when times match nothing, then still 200', async () => {
      const group = await seeded();
      const reply = await api.call('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
        json: { times: ['2020-01-01T00:00:00.000Z'] },
      });
      expect(reply.status).to.equal(200);
      expect(await open(group)).to.have.length(3);
    });

    it('when one time is given, then that notification is ignored', async () => {
      const group = await seeded();
      const reply = await api.call('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
        json: { time: '2025-06-15T09:00:00.000Z' },
      });
      expect(reply.status).to.equal(200);
      expect(await open(group)).to.deep.equal(['third', 'first']);
    });

    it('when the one time matches nothing, then 404 {message: "Notification not found"}', async () => {
      const group = await seeded();
      const reply = await api.call('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
        json: { time: '2020-01-01T00:00:00.000Z' },
      });
      expect(reply.status).to.equal(404);
      expect(reply.json()).to.deep.equal({ message: 'Notification not found' });
    });

    it('when neither time nor times is given, then 400 {message: "No time or times provided"}', async () => {
      const reply = await api.call(
        'POST',
        `/api/notification/notifications/ignore?groupId=${api.unique('g')}`,
        { json: {} },
      );
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'No time or times provided' });
    });

    it('when times holds a non-date, then 400 {message} and nothing is ignored', async () => {
      const group = await seeded();
      const reply = await api.call('POST', `/api/notification/notifications/ignore?groupId=${group}`, {
        json: { times: ['2025-06-15T08:00:00.000Z', { $gt: '' }] },
      });
      expect(reply.status).to.equal(400);
      expect(reply.json()).to.deep.equal({ message: 'times[1] must be string' });
      expect(await open(group)).to.have.length(3);
    });
  });

  describe('GET /latestdata/github', () => {
    const commits = [
      { sha: 'abc', commit: { message: 'Water more', author: { date: '2025-06-01T00:00:00Z' } } },
    ];
    let host: FakeCodeHost;
    let server: TestServer;

    beforeEach(async () => {
      host = new FakeCodeHost();
      const apiUrl = await host.start();
      server = await startTestServer({
        CODE_HOST_API_URL: apiUrl,
        CODE_HOST_REPOSITORY: 'hortus-org/hortus',
        CODE_HOST_TOKEN: 'secret-token',
        CODE_HOST_TIMEOUT_MS: '300',
        COMMITS_CACHE_MS: '30000',
      });
    });
    afterEach(async () => {
      await server.close();
      await host.stop();
    });

    it("when the code host answers, then its body is passed through and asked for main's ten newest", async () => {
      host.answerJson(200, commits);
      const reply = await server.get('/api/notification/latestdata/github');
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal(commits);
      expect(host.requests).to.have.length(1);
      expect(host.requests[0]?.url).to.equal('/repos/hortus-org/hortus/commits?sha=main&per_page=10');
      expect(host.requests[0]?.headers).to.include({
        accept: 'application/vnd.github+json',
        authorization: 'Bearer secret-token',
      });
    });

    it('when asked again within the cache time, then the code host is not asked again', async () => {
      host.answerJson(200, commits);
      await server.get('/api/notification/latestdata/github');
      server.clock.advance(29_000);
      const reply = await server.get('/api/notification/latestdata/github');
      expect(reply.json()).to.deep.equal(commits);
      expect(host.requests).to.have.length(1);
    });

    it('when the code host fails after the cache expired, then the stale copy is served', async () => {
      host.answerJson(200, commits);
      await server.get('/api/notification/latestdata/github');
      host.answerJson(503, { message: 'down' });
      server.clock.advance(31_000);
      const reply = await server.get('/api/notification/latestdata/github');
      expect(reply.status).to.equal(200);
      expect(reply.json()).to.deep.equal(commits);
      // The refresh runs behind the stale answer, which may reach the client first.
      await eventually(() => expect(host.requests).to.have.length(2));
    });

    it('when the code host fails and nothing is cached, then 500 plain text', async () => {
      host.answerJson(500, { message: 'boom' });
      const reply = await server.get('/api/notification/latestdata/github');
      expect(reply.status).to.equal(500);
      expect(reply.headers.get('content-type')).to.match(/^text\/plain/u);
      expect(reply.text).to.equal('An error occurred while fetching data from the code host');
    });

    it('when the code host does not answer in time, then 500 plain text after the timeout', async () => {
      host.handler = () => {};
      const started = Date.now();
      const reply = await server.get('/api/notification/latestdata/github');
      expect(reply.status).to.equal(500);
      expect(Date.now() - started).to.be.below(3000);
    });
  });
});
