import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP /api/actions: the maximum on-time', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  const setLimit = (body: Record<string, unknown>) => api.call('POST', '/api/actions/limit', { json: body });

  it('when a limit is set, then 200 {message: {group, object, maxOnMs}}, and get_automations shows it with the action', async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group, [{ tempMax: 30 }]);
    await api.seed.action(group, 'pump_1');
    const reply = await setLimit({ group, object: 'pump_1', maxOnMs: 1_800_000 });
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal({ message: { group, object: 'pump_1', maxOnMs: 1_800_000 } });

    const shown = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=pump_1`);
    expect(shown.json()).to.include({ object: 'pump_1', maxOnMs: 1_800_000 });

    // The web client writes its own settings keys only: the limit stays.
    const kept = await api.call('PUT', `/api/group/update?groupId=${group}`, {
      json: { settings: [{ tempMax: 28 }] },
    });
    expect(kept.status).to.equal(200);
    const still = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=pump_1`);
    expect(still.json()).to.include({ maxOnMs: 1_800_000 });

    const removed = await setLimit({ group, object: 'pump_1', maxOnMs: null });
    expect(removed.json()).to.deep.equal({ message: { group, object: 'pump_1' } });
    const none = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=pump_1`);
    expect(none.json()).to.not.have.property('maxOnMs');
  });

  it('when the limit is out of bounds or not a number, then 400 {message} names it and nothing is written', async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group);
    await api.seed.action(group, 'pump_1');
    for (const maxOnMs of [59_999, 604_800_001, '30m', 1.5, true]) {
      const reply = await setLimit({ group, object: 'pump_1', maxOnMs });
      expect(reply.status, String(maxOnMs)).to.equal(400);
      expect(reply.json())
        .to.have.property('message')
        .that.matches(/^max-on /u);
    }
    const missing = await setLimit({ group, object: 'pump_1' });
    expect(missing.status).to.equal(400);
    expect(missing.json()).to.deep.equal({ message: 'maxOnMs is required' });
    const shown = await api.get(`/api/actions/get_automations?groupId=${group}&deviceName=pump_1`);
    expect(shown.json()).to.not.have.property('maxOnMs');
  });

  it('when the action does not exist, then 404 {message}', async () => {
    const group = api.unique('greenhouse');
    await api.seed.group(group);
    const reply = await setLimit({ group, object: 'pump_9', maxOnMs: 600_000 });
    expect(reply.status).to.equal(404);
    expect(reply.json()).to.deep.equal({ message: `no action pump_9 in group ${group}` });
  });
});
