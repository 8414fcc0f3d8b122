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

  it('when an admin key registers a device, invites a user and makes a reset link over HTTP, then each is in the trail under the key, without the code or the link', async () => {
    const device = await api.call(
      'GET',
      '/api/devices/create?deviceId=24:6F:28:AA:00:07&group=tomatoes&type=sensor-box',
      { headers: admin },
    );
    expect(device.status, device.text).to.equal(201);
    const invite = await api.call('POST', '/api/admin/users/invitations', {
      headers: admin,
      json: { email: 'ben@example.org', group: 'tomatoes' },
    });
    expect(invite.status, invite.text).to.equal(201);
    await api.seed.user('ada@example.org');
    const reset = await api.call('POST', '/api/admin/users/reset-link', {
      headers: admin,
      json: { email: 'ada@example.org' },
    });
    expect(reset.status, reset.text).to.equal(200);

    const reply = await api.call('GET', '/api/audit?limit=10', { headers: admin });

    const entries = reply.json() as { action: string; target: string; actor: unknown }[];
    const byAction = (action: string) => entries.filter((entry) => entry.action === action);
    for (const action of ['device.create', 'user.invite', 'user.reset-link']) {
      expect(byAction(action), action).to.have.lengthOf(1);
      expect(byAction(action)[0]?.actor, action).to.deep.equal({ kind: 'key', id: adminId });
    }
    expect(reply.text).to.not.include((invite.json() as { code: string }).code);
    expect(reply.text).to.not.include((reset.json() as { link: string }).link);
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
