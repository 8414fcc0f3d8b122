import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP /api/group', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  const settings = [{ tempMin: 15 }, { tempMax: 30 }, { emailNotification: true }, { email: 'a@b.org' }];

  it('GET /checkGroup (any case) answers {exists} for known and unknown groups', async () => {
    const name = api.unique('greenhouse');
    await api.seed.group(name);
    expect((await api.get(`/api/group/checkGroup?group=${name}`)).json()).to.deep.equal({ exists: true });
    const unknown = await api.get(`/api/group/checkgroup?group=${api.unique('nope')}`);
    expect(unknown.status).to.equal(200);
    expect(unknown.json()).to.deep.equal({ exists: false });
  });

  it('GET /abo answers the Group record with _id', async () => {
    const name = api.unique('greenhouse');
    await api.seed.group(name, settings);
    const reply = await api.get(`/api/group/abo?group=${name}`);
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.include({ name, package: 'small', employee: [], settings });
    expect(reply.json()).to.have.all.keys('_id', 'name', 'package', 'employee', 'settings');
  });

  it('GET /abo for an unknown group answers 404 {message: "Group not found"} (the old service hung)', async () => {
    const reply = await api.get(`/api/group/abo?group=${api.unique('nope')}`);
    expect(reply.status).to.equal(404);
    expect(reply.json()).to.deep.equal({ message: 'Group not found' });
  });

  it('PUT /update replaces the settings as a whole and GET /settings hands them back unchanged', async () => {
    const name = api.unique('greenhouse');
    await api.seed.group(name, [{ tempMin: 1 }]);
    const reply = await api.call('PUT', `/api/group/update?groupId=${name}`, { json: { settings } });
    expect(reply.status).to.equal(200);
    expect((reply.json() as { settings: unknown }).settings).to.deep.equal(settings);
    const read = await api.get(`/api/group/settings?groupId=${name}`);
    expect(read.status).to.equal(200);
    expect(read.json()).to.deep.equal(settings);
  });

  it('when settings are a bare string, then GET /settings answers it as JSON', async () => {
    const name = api.unique('greenhouse');
    await api.seed.group(name);
    await api.call('PUT', `/api/group/update?groupId=${name}`, { json: { settings: 'quiet' } });
    const read = await api.get(`/api/group/settings?groupId=${name}`);
    expect(read.headers.get('content-type')).to.match(/^application\/json/u);
    expect(read.json()).to.equal('quiet');
  });

  it('PUT /update and GET /settings answer 404 {message: "Group not found"} for an unknown group', async () => {
    const name = api.unique('nope');
    const update = await api.call('PUT', `/api/group/update?groupId=${name}`, { json: { settings } });
    expect(update.status).to.equal(404);
    expect(update.json()).to.deep.equal({ message: 'Group not found' });
    const read = await api.get(`/api/group/settings?groupId=${name}`);
    expect(read.status).to.equal(404);
    expect(read.json()).to.deep.equal({ message: 'Group not found' });
  });

  it('when the group name is repeated or too long, then 400 {message} (a documented addition to SPEC)', async () => {
    const repeated = await api.get('/api/group/abo?group=a&group=b');
    expect(repeated.status).to.equal(400);
    expect(repeated.json()).to.deep.equal({ message: 'group must be given only once' });
    const long = await api.get(`/api/group/checkgroup?group=${'g'.repeat(101)}`);
    expect(long.status).to.equal(400);
    expect(long.json()).to.have.all.keys('message');
  });

  it('when PUT /update has no settings, then 400 {message} and the group is unchanged', async () => {
    const name = api.unique('greenhouse');
    await api.seed.group(name, settings);
    const reply = await api.call('PUT', `/api/group/update?groupId=${name}`, { json: { setings: [] } });
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ message: 'settings is required' });
    expect((await api.get(`/api/group/settings?groupId=${name}`)).json()).to.deep.equal(settings);
  });
});
