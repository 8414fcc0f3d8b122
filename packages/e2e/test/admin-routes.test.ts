import { CreateAccessKey, CreateUser, type UserRole } from '@hortus/core';
import { onboard } from './box-requests.js';
import { expect, type Reply, startTestServer, type TestServer } from './harness.js';

const PASSWORD = 'Tomato#Bed42';

/**
 * The admin routes (`/api/admin/...`) and the alert settings (`/api/alerts/...`): what `hortus device`,
 * `hortus keys`, `hortus user` and `hortus group alert|notify` do, over HTTP, for admins only (the
 * settings of a group: for its operators too).
 */
describe('Administration over HTTP', () => {
  let api: TestServer;
  let group: string;
  const as = new Map<string, Record<string, string>>();

  async function logIn(role: UserRole): Promise<Record<string, string>> {
    const email = `${api.unique(role)}@example.org`;
    await api.container
      .get(CreateUser)
      .execute({ firstName: 'A', lastName: 'B', email, group, password: PASSWORD, role });
    const answer = await api.call('POST', '/api/auth', { json: { email, password: PASSWORD } });
    const { token } = (answer.json() as { data: { token: string } }).data;
    return { authorization: `Bearer ${token}` };
  }

  const call = (who: string, method: string, path: string, json?: unknown): Promise<Reply> =>
    api.call(method, path, { headers: as.get(who) ?? {}, ...(json === undefined ? {} : { json }) });

  before(async () => {
    api = await startTestServer({ AUTH: 'on' });
    group = api.unique('admin');
    await api.seed.group(group);
    for (const role of ['viewer', 'operator', 'admin'] as const) as.set(role, await logIn(role));
    const { secret } = await api.container
      .get(CreateAccessKey)
      .execute({ name: 'ops', kind: 'admin', groups: [] });
    as.set('admin key', { authorization: `Bearer ${secret}` });
  });
  after(() => api.close());

  it('when a box waits, then an admin lists it, claims it into a group, locks, unlocks and rotates its key; an operator is refused each', async () => {
    const sent = '1f0ee286f24';
    expect((await onboard(api, sent)).status).to.equal(400);

    const pending = await call('admin', 'GET', '/api/admin/boxes/pending');
    expect(pending.status).to.equal(200);
    expect((pending.json() as { boxId: string }[]).map((box) => box.boxId)).to.include(sent);
    expect((await call('operator', 'GET', '/api/admin/boxes/pending')).status).to.equal(403);

    const refused = await call('operator', 'POST', `/api/admin/boxes/${sent}/claim`, { group });
    expect(refused.status).to.equal(403);
    expect(refused.json()).to.deep.equal({ message: 'Only an admin may do this' });
    const claimed = await call('admin key', 'POST', `/api/admin/boxes/${sent}/claim`, { group });
    expect(claimed.status, claimed.text).to.equal(200);
    expect(claimed.json()).to.deep.include({ group, type: 'box' });

    const locked = await call('admin', 'POST', '/api/admin/boxes/24:6F:28:EE:F0:01/lock');
    expect(locked.status, locked.text).to.equal(200);
    expect(locked.json()).to.deep.include({ locked: true });
    const unlocked = await call('admin', 'POST', `/api/admin/boxes/${sent}/unlock`);
    // Stores leave an unlocked device's flag out, or keep it false.
    expect((unlocked.json() as { locked?: boolean }).locked ?? false).to.equal(false);
    const rotated = await call('admin', 'POST', `/api/admin/boxes/${sent}/rotate-key`, { revoke: true });
    expect(rotated.status, rotated.text).to.equal(200);
    expect(rotated.text).not.to.match(/keyHash|secret/u);
    expect((await call('admin', 'POST', '/api/admin/boxes/0000deadbeef/lock')).status).to.equal(404);
    const approve = await call('admin', 'POST', `/api/admin/boxes/${sent}/approve-move`);
    expect(approve.status).to.equal(409);
  });

  it('when an admin creates a key, then its secret is shown once, it works, is listed without it, and revoked it is refused', async () => {
    const created = await call('admin', 'POST', '/api/admin/keys', {
      name: 'wall display',
      kind: 'viewer',
      groups: [group],
    });
    expect(created.status, created.text).to.equal(201);
    const { key, secret } = created.json() as { key: { id: string; kind: string }; secret: string };
    expect(key.kind).to.equal('viewer');
    expect(secret).to.match(/^hk_/u);
    const listed = await call('admin', 'GET', '/api/admin/keys');
    expect(listed.text).to.contain(key.id).and.not.contain(secret);
    const read = await api.call('GET', `/api/actions/current_state?group=${group}`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(read.status).to.not.equal(403);

    const bad = await call('admin', 'POST', '/api/admin/keys', { name: 'x', kind: 'root' });
    expect(bad.status).to.equal(400);
    expect((await call('viewer', 'POST', '/api/admin/keys', { name: 'x', kind: 'admin' })).status).to.equal(
      403,
    );

    const revoked = await call('admin', 'POST', `/api/admin/keys/${key.id}/revoke`);
    expect(revoked.status).to.equal(200);
    expect(revoked.json()).to.have.property('revokedAt');
    expect((await call('admin', 'POST', '/api/admin/keys/nope/revoke')).status).to.equal(404);
  });

  it('when an admin lists users and sets a role, then the list shows roles without hashes, and the role is set', async () => {
    const listed = await call('admin', 'GET', '/api/admin/users');
    expect(listed.status).to.equal(200);
    expect(listed.text).not.to.match(/\$2[aby]\$|password/u);
    const users = listed.json() as { id: string; email: string; role: string }[];
    const viewer = users.find((user) => user.role === 'viewer');
    expect(viewer).to.not.equal(undefined);

    const changed = await call('admin', 'PUT', `/api/admin/users/${viewer?.id}/role`, { role: 'operator' });
    expect(changed.status, changed.text).to.equal(200);
    expect(changed.json()).to.deep.include({ id: viewer?.id, role: 'operator' });
    expect(
      (await call('admin', 'PUT', `/api/admin/users/${viewer?.id}/role`, { role: 'owner' })).status,
    ).to.equal(400);
    expect(
      (await call('admin', 'PUT', '/api/admin/users/0123456789abcdef01234567/role', { role: 'viewer' }))
        .status,
    ).to.equal(404);
    expect((await call('operator', 'GET', '/api/admin/users')).status).to.equal(403);
  });

  it('when an admin invites an e-mail and asks for a reset link, then both are answered for that user and group', async () => {
    const email = `${api.unique('eve')}@example.org`;
    const invited = await call('admin', 'POST', '/api/admin/users/invitations', { email, group });
    expect(invited.status, invited.text).to.equal(201);
    const { code } = invited.json() as { code: string };
    const signedUp = await api.call('POST', '/api/users', {
      json: { firstName: 'Eve', lastName: 'G', email, password: PASSWORD, group, invitation: code },
    });
    expect(signedUp.status, signedUp.text).to.equal(201);

    const link = await call('admin', 'POST', '/api/admin/users/reset-link', { email });
    expect(link.status, link.text).to.equal(200);
    expect((link.json() as { link: string }).link).to.match(/reset_password\/[0-9a-f]+\/[0-9a-f]{64}$/u);
    expect((await call('operator', 'POST', '/api/admin/users/reset-link', { email })).status).to.equal(403);
  });

  it("when a group's ranges and deadlines are set, then operators of the group may, viewers may not, and webhooks are the admins'", async () => {
    const range = { group, topic: 'esp/air/temperature', max: 30, noDataMs: 600_000 };
    expect((await call('viewer', 'PUT', '/api/alerts/topic', range)).status).to.equal(403);
    const set = await call('operator', 'PUT', '/api/alerts/topic', range);
    expect(set.status, set.text).to.equal(200);
    expect(set.json()).to.deep.include({ topic: 'esp/air/temperature' });
    const box = await call('operator', 'PUT', '/api/alerts/box', { group, deviceId: '*', noDataMs: 900_000 });
    expect(box.status, box.text).to.equal(200);
    const shown = await call('viewer', 'GET', `/api/alerts?group=${group}`);
    expect(shown.status).to.equal(200);
    const view = shown.json() as { topics: { topic: string; max?: number }[]; boxes: { deviceId: string }[] };
    expect(view.topics.find((topic) => topic.topic === 'esp/air/temperature')).to.deep.include({ max: 30 });
    expect(view.boxes.map((entry) => entry.deviceId)).to.deep.equal(['*']);

    const hook = {
      url: 'https://hooks.example.org/T0/secret-token',
      secret: 'a-signing-secret-of-32-chars!!!!',
    };
    expect(
      (await call('operator', 'PUT', '/api/alerts/notify', { group, addWebhook: hook })).status,
    ).to.equal(403);
    const added = await call('admin', 'PUT', '/api/alerts/notify', {
      group,
      addWebhook: hook,
      events: ['opened'],
    });
    expect(added.status, added.text).to.equal(200);
    expect(added.text).not.to.contain('secret-token').and.not.to.contain(hook.secret);
    expect(added.json()).to.deep.include({ events: ['opened'] });
    const listed = await call('admin', 'GET', `/api/alerts/notify?group=${group}`);
    const [shownHook] = (listed.json() as { webhooks: { url: string }[] }).webhooks;
    // As the CLI lists it: origin, `/…` and a digest of the whole URL, which remove takes.
    expect(shownHook).to.deep.include({ format: 'json', secret: '…!!!!' });
    expect(shownHook?.url).to.match(/^https:\/\/hooks\.example\.org\/… #[0-9a-f]{6}$/u);
    const removed = await call('admin', 'PUT', '/api/alerts/notify', {
      group,
      removeWebhook: shownHook?.url,
    });
    expect(removed.status, removed.text).to.equal(200);
    expect(removed.json()).to.deep.include({ webhooks: [] });
  });
});

describe('Administration over HTTP on a server without keys', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(() => api.close());

  it('then the admin routes still need an admin credential, while the rest stays open', async () => {
    const refused = await api.call('POST', '/api/admin/keys', { json: { name: 'x', kind: 'admin' } });
    expect(refused.status).to.equal(401);
    expect((refused.json() as { message: string }).message).to.contain(
      "an admin's log-in token or an admin key",
    );
    expect((await api.get('/api/admin/users')).status).to.equal(401);
    expect((await api.get('/api/group/checkgroup?group=any')).status).to.equal(200);
  });
});
