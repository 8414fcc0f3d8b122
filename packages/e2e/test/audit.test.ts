import { CreateAccessKey } from '@hortus/core';
import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP GET /api/audit', () => {
  let api: TestServer;
  let admin: Record<string, string>;
  let client: Record<string, string>;
  let adminId: string;

  before(async () => {
    api = await startTestServer();
    await api.seed.group('tomatoes', [{ tempMax: 30 }]);
    const create = api.container.get(CreateAccessKey);
    const made = await create.execute({ name: 'ops', kind: 'admin' });
    adminId = made.key.id;
    admin = { authorization: `Bearer ${made.secret}` };
    const other = await create.execute({ name: 'app', kind: 'client' });
    client = { authorization: `Bearer ${other.secret}` };
  });
  after(() => api.close());

  it('when an admin key changes the settings over HTTP, then the trail names the key, before and after', async () => {
    const put = await api.call('PUT', '/api/group/update?groupId=tomatoes', {
      headers: admin,
      json: { settings: [{ tempMax: 28 }] },
    });
    expect(put.status, put.text).to.equal(200);

    const reply = await api.call('GET', '/api/audit?group=tomatoes&limit=5', { headers: admin });

    expect(reply.status, reply.text).to.equal(200);
    const [newest] = reply.json() as Record<string, unknown>[];
    expect(newest).to.deep.include({
      action: 'group.settings',
      target: 'tomatoes',
      group: 'tomatoes',
      actor: { kind: 'key', id: adminId },
      before: [{ tempMax: 30 }],
      after: [{ tempMax: 28 }],
    });
  });

  it('when a key that is not an admin asks, then 403; without a key, 401', async () => {
    expect((await api.call('GET', '/api/audit', { headers: client })).status).to.equal(403);
    expect((await api.call('GET', '/api/audit')).status).to.equal(401);
  });

  it('when the query is not valid, then 400 {message}', async () => {
    const reply = await api.call('GET', '/api/audit?since=yesterday', { headers: admin });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.have.property('message').that.matches(/since/u);
  });
});
