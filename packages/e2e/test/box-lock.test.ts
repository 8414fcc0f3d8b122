import {
  ApproveDeviceMove,
  ClearPendingDevices,
  type DeviceView,
  ListDeviceViews,
  ListPendingDevices,
  PENDING_MAX_AGE_MS,
  SetDeviceLock,
} from '@hortus/core';
import { expect, type Reply, startTestServer, type TestServer, testStore } from './harness.js';
import { REFUSED } from './box-requests.js';

describe(`A locked box reboots (${testStore} store)`, () => {
  let api: TestServer;
  before(async () => {
    // TRUST_PROXY=on lets each request speak from an address of its own (X-Forwarded-For).
    api = await startTestServer({ TRUST_PROXY: 'on', UNKNOWN_DEVICE_PER_MINUTE: '1000' });
  });
  after(async () => {
    await api.close();
  });

  let boxes = 0;
  async function registeredBox(): Promise<{ group: string; sent: string; label: string }> {
    boxes += 1;
    const byte = boxes.toString(16).padStart(2, '0');
    const label = `24:6F:28:AC:${byte.toUpperCase()}:01`;
    const group = api.unique('lock-group');
    await api.seed.group(group);
    await api.seed.device(label, group);
    return { group, sent: `1${byte}ac286f24`, label };
  }

  /** The firmware's exact onboarding request (COMPAT "Boxes"), from `address`. */
  function onboardFrom(sent: string, address: string): Promise<Reply> {
    return api.call('GET', '/api/hardware', {
      headers: {
        deviceId: sent,
        updateVersion: '1.0.4',
        lastactive: '5230',
        'Content-Type': 'application/json',
        'x-forwarded-for': address,
      },
    });
  }

  async function viewOf(label: string): Promise<DeviceView | undefined> {
    return (await api.container.get(ListDeviceViews).execute({})).find((d) => d.deviceId === label);
  }

  it('when a locked box reboots twice from the address it onboarded from, then it gets its key back each time', async () => {
    const { sent, label } = await registeredBox();
    const first = await onboardFrom(sent, '10.2.0.7');
    expect(first.status).to.equal(200);
    await api.container.get(SetDeviceLock).execute({ id: label, locked: true });

    const reboot = await onboardFrom(sent, '10.2.0.7');
    const again = await onboardFrom(sent, '10.2.0.7');

    expect(reboot.status, reboot.text).to.equal(200);
    expect(again.status, again.text).to.equal(200);
    const key = (reply: Reply): unknown => (reply.json() as { apiKey: string }).apiKey;
    expect(key(reboot)).to.equal(key(first));
    expect(key(again)).to.equal(key(first));
    expect(await viewOf(label))
      .to.include({ locked: true })
      .and.not.to.have.property('moveRequest');
  });

  it('when a locked device is asked for from another address, then it is refused as the firmware knows, a warning names both addresses, and the administrator sees the move', async () => {
    const { sent, label } = await registeredBox();
    expect((await onboardFrom(sent, '10.2.0.8')).status).to.equal(200);
    await api.container.get(SetDeviceLock).execute({ id: label, locked: true });

    const stranger = await onboardFrom(sent, '10.9.9.9');

    expect(stranger.status).to.equal(400);
    expect(stranger.text).to.equal(REFUSED);
    const warning = api.logger.lines.find(
      (line) => line.event === 'locked device onboarding refused' && line['deviceId'] === label,
    );
    expect(warning).to.deep.include({ level: 'warn', address: '10.9.9.9', lastAddress: '10.2.0.8' });
    expect((await viewOf(label))?.moveRequest).to.deep.include({
      address: '10.9.9.9',
      from: '10.2.0.8',
    });
    // The box itself still gets in from its own address, and that clears the refused move.
    expect((await onboardFrom(sent, '10.2.0.8')).status).to.equal(200);
    expect(await viewOf(label)).not.to.have.property('moveRequest');
  });

  it('when the box really moved and an administrator approves, then it onboards from the new address, stays locked, and the old address is refused', async () => {
    const { sent, label } = await registeredBox();
    expect((await onboardFrom(sent, '10.2.0.9')).status).to.equal(200);
    await api.container.get(SetDeviceLock).execute({ id: label, locked: true });
    expect((await onboardFrom(sent, '10.3.0.9')).status).to.equal(400);
    await expect(api.container.get(ApproveDeviceMove).execute({ id: 'AA:BB:CC:DD:EE:FF' })).to.be.rejected;

    const approved = await api.container.get(ApproveDeviceMove).execute({ id: label });
    // A later refusal from a third address does not undo the approval.
    expect((await onboardFrom(sent, '10.4.0.9')).status).to.equal(400);
    const moved = await onboardFrom(sent, '10.3.0.9');

    expect(approved.moveRequest).to.deep.include({ address: '10.3.0.9', approved: true });
    expect(moved.status, moved.text).to.equal(200);
    expect(await viewOf(label))
      .to.include({ locked: true })
      .and.not.to.have.property('moveRequest');
    expect((await onboardFrom(sent, '10.2.0.9')).status).to.equal(400);
    await expect(api.container.get(ApproveDeviceMove).execute({ id: 'nobody-here' })).to.be.rejected;
  });

  it('when a device was locked before it ever onboarded, then it is refused and the move can be approved', async () => {
    const { sent, label } = await registeredBox();
    await api.container.get(SetDeviceLock).execute({ id: label, locked: true });

    expect((await onboardFrom(sent, '10.5.0.1')).status).to.equal(400);
    await api.container.get(ApproveDeviceMove).execute({ id: label });

    expect((await onboardFrom(sent, '10.5.0.1')).status).to.equal(200);
  });
});

describe(`The pending-box list (${testStore} store)`, () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({
      TRUST_PROXY: 'on',
      UNKNOWN_DEVICE_PER_MINUTE: '1000',
      MAX_PENDING_DEVICES: '3',
    });
  });
  after(async () => {
    await api.close();
  });

  const unknown = (sent: string): Promise<Reply> =>
    api.call('GET', '/api/hardware', { headers: { deviceId: sent, 'x-forwarded-for': '10.6.0.1' } });
  const pendingIds = async (): Promise<string[]> =>
    (await api.container.get(ListPendingDevices).execute()).map((p) => p.boxId);

  it('when made-up ids fill the list, then a real new box still shows, the oldest having given way', async () => {
    for (const sent of ['a1aa286f24', 'a2aa286f24', 'a3aa286f24']) {
      await unknown(sent);
      api.clock.advance(1000);
    }

    await unknown('b1aa286f24');

    expect(await pendingIds()).to.deep.equal(['b1aa286f24', 'a3aa286f24', 'a2aa286f24']);
  });

  it('when an entry was not seen for the age limit, then it is no longer listed, and gone at the next unknown onboarding', async () => {
    await unknown('c1aa286f24');
    api.clock.advance(PENDING_MAX_AGE_MS + 1000);
    await unknown('c2aa286f24');

    expect(await pendingIds()).to.deep.equal(['c2aa286f24']);
  });

  it('when an administrator clears one id or all, then exactly those are gone', async () => {
    await unknown('d1aa286f24');
    await unknown('d2aa286f24');

    expect(await api.container.get(ClearPendingDevices).execute({ id: 'd1aa286f24' })).to.equal(1);
    expect(await pendingIds()).not.to.include('d1aa286f24');
    await expect(api.container.get(ClearPendingDevices).execute({ id: 'd1aa286f24' })).to.be.rejected;
    expect(await api.container.get(ClearPendingDevices).execute({})).to.be.greaterThan(0);
    expect(await pendingIds()).to.deep.equal([]);
  });
});
