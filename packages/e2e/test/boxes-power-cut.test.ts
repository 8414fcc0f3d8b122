import { DEVICE_REPOSITORY, type DeviceRepository, EvaluateAlerts } from '@hortus/core';
import { onboard } from './box-requests.js';
import { expect, startTestServer, type TestServer, testNow } from './harness.js';

type Listed = { _id: string; message: string; severity?: string };

/**
 * The whole application after a power cut: boxes of a group were seen just before the server started, one
 * onboards again, one does not. The engine is off in test servers; the test evaluates the alerts itself, on
 * the server's fake clock, as the engine's tick would.
 */
describe('HTTP: boxes silent since the server started (power cuts)', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ BOX_START_GRACE_MS: '600000' });
  });
  after(async () => {
    await api.close();
  });

  const listed = async (group: string): Promise<Listed[]> => {
    const reply = await api.get(`/api/notification/latestdata/notifications?groupId=${group}`);
    expect(reply.status, reply.text).to.equal(200);
    return reply.json() as Listed[];
  };

  it('when a box has not come back 10 minutes after the start, then GET notifications lists one warning naming it and saying to power-cycle it, and its return ends it', async () => {
    const group = api.unique('power-cut');
    const [back, stuck] = ['a0b1c2d3e4f6', '100aa286f25'];
    await api.seed.group(group);
    await api.seed.device(back, group);
    await api.seed.device(stuck, group);
    const devices = api.container.get<DeviceRepository>(DEVICE_REPOSITORY);
    const beforeStart = new Date(testNow.getTime() - 60_000);
    for (const box of [back, stuck]) await devices.update(box, { lastSeenAt: beforeStart });
    const alerts = api.container.get(EvaluateAlerts);

    api.clock.advance(60_000);
    expect((await onboard(api, back)).status).to.equal(200);
    expect(await alerts.execute(), 'within the grace').to.deep.equal([]);

    api.clock.advance(10 * 60_000);
    expect((await alerts.execute()).map((n) => n.group)).to.deep.equal([group]);
    const [alert, ...others] = await listed(group);
    expect(others).to.deep.equal([]);
    expect(alert?.severity).to.equal('warning');
    expect(alert?.message).to.contain(`Box of group ${group} has sent nothing since the server started`);
    expect(alert?.message).to.contain(`${stuck} (MAC 25:6F:28:AA:00:01)`).and.contain('Power-cycle it');
    expect(alert?.message).not.to.contain(back);
    api.clock.advance(60_000);
    expect(await alerts.execute(), 'once').to.deep.equal([]);

    expect((await onboard(api, stuck)).status).to.equal(200);
    api.clock.advance(60_000);
    expect((await alerts.execute()).map((n) => n.message)).to.deep.equal([
      `Box of group ${group} silent since the server started is reporting again: ${stuck} (MAC 25:6F:28:AA:00:01)`,
    ]);
    expect((await listed(group)).map((n) => n._id)).to.include(alert?._id);
  });
});
