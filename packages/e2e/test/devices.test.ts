import { expect, startTestServer, type TestServer } from './harness.js';

describe('HTTP /api/devices', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when a device is created, then 201 {message} and the group lists it with _id', async () => {
    const group = api.unique('greenhouse');
    const created = await api.get(
      `/api/devices/create?deviceId=24:6F:28:AA:00:01&group=${group}&type=sensor-box`,
    );
    expect(created.status).to.equal(201);
    expect(created.json()).to.deep.equal({ message: 'Device created successfully' });
    const listed = await api.get(`/api/devices/?group=${group}`);
    expect(listed.status).to.equal(200);
    const { message } = listed.json() as { message: Record<string, unknown>[] };
    expect(message).to.have.length(1);
    expect(message[0]).to.include({ deviceId: '24:6F:28:AA:00:01', group, type: 'sensor-box' });
    // The box tracking adds its fields after SPEC's four (docs/api.md); a device that never onboarded:
    expect(message[0]).to.have.all.keys(
      ...['_id', 'deviceId', 'group', 'type'],
      ...['macAddress', 'boxId', 'locked', 'silent', 'onboardings'],
    );
    expect(message[0]).to.include({ macAddress: '24:6F:28:AA:00:01', boxId: '100aa286f24', silent: false });
  });

  it('when the group has no devices, then 400 {message: "no data found"}', async () => {
    const reply = await api.get(`/api/devices?group=${api.unique('empty')}`);
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ message: 'no data found' });
  });

  it('when the deviceId exists already, then 409 {message} and the first device is kept', async () => {
    const group = api.unique('greenhouse');
    await api.seed.device('24:6F:28:BB:00:01', group, 'relay-box');
    const reply = await api.get(`/api/devices/create?deviceId=24:6F:28:BB:00:01&group=${group}&type=other`);
    expect(reply.status).to.equal(409);
    expect(reply.json()).to.have.all.keys('message');
    const listed = (await api.get(`/api/devices?group=${group}`)).json() as { message: { type: string }[] };
    expect(listed.message.map((device) => device.type)).to.deep.equal(['relay-box']);
  });

  it('when a create parameter is missing or malformed, then 400 {message} and nothing is stored', async () => {
    const group = api.unique('greenhouse');
    const missing = await api.get(`/api/devices/create?deviceId=x1&group=${group}`);
    expect(missing.status).to.equal(400);
    expect(missing.json()).to.deep.equal({ message: 'type is required' });
    const malformed = await api.get(
      `/api/devices/create?deviceId=${encodeURIComponent('a b<')}&group=${group}&type=t`,
    );
    expect(malformed.status).to.equal(400);
    expect((await api.get(`/api/devices?group=${group}`)).status).to.equal(400);
  });
});
