import { AutomationEngine, SetTopicAlert } from '@hortus/core';
import { insertOne, latestOf, onboarded } from './box-requests.js';
import { expect, startTestServer, type TestServer } from './harness.js';

type Notification = { message: string; time: string };

/**
 * Issue 35 item 2: the derived series are watched like readings. The server's clock stands at 12:30:00Z; a
 * box stamps Berlin wall-clock time (14:30 is 12:30Z). A minute's window is derived once it ended two
 * minutes ago, so the engine's tick three minutes later derives the VPD of the box's round.
 */
describe('derived series: a VPD alert and a VPD rule from box readings (issue 35)', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when a box sends warm dry air, then the VPD is derived, its alert range opens an alert and a rule on vpd switches the fan', async () => {
    const group = api.unique('vpd');
    // 30 °C at 40 %: 4.24 kPa saturated, a VPD of 2.55 kPa.
    await api.seed.group(group, [{ metrics: { vpd: true } }]);
    await api.container.get(SetTopicAlert).execute({ group, topic: 'esp/derived/vpd', min: 0.8, max: 1.2 });
    await api.seed.action(group, 'fan');
    const rules = [
      {
        timeAutomations: [],
        sensorAutomations: [{ action: 'on', sensor: 'vpd', condition: 'above', value: '1.6' }],
      },
    ];
    const update = await api.call('POST', '/api/actions/update', {
      json: { group, object: 'fan', automations: rules },
    });
    expect(update.status, update.text).to.equal(200);
    const deviceId = '24:6F:28:AA:35:01';
    await api.seed.device(deviceId, group);
    const box = await onboarded(api, deviceId);
    expect(
      (await insertOne(api, box, 'esp/air/temperature', '30.00', '2025-06-15T14:30:00.000Z')).status,
    ).to.equal(201);
    expect(
      (await insertOne(api, box, 'esp/air/humidity', '40.00', '2025-06-15T14:30:05.000Z')).status,
    ).to.equal(201);

    api.clock.advance(3 * 60_000);
    const tick = await api.container.get(AutomationEngine).tick();

    expect(tick.failures).to.deep.equal([]);
    const vpd = (await latestOf(api, group)).find((reading) => reading.topic === 'esp/derived/vpd');
    expect(vpd?.value).to.be.closeTo(2.55, 0.01);
    expect(vpd?.time).to.equal('2025-06-15T12:30:05.000Z');
    const open = (
      await api.get(`/api/notification/latestdata/notifications?groupId=${group}`)
    ).json() as Notification[];
    expect(open.map((n) => n.message)).to.satisfy((messages: string[]) =>
      messages.some((m) => /^esp\/derived\/vpd is above its maximum of 1\.2 kPa: 2\.5\d* kPa at /u.test(m)),
    );
    expect(tick.switched.map((event) => [event.group, event.object, event.value])).to.deep.equal([
      [group, 'fan', 'on'],
    ]);
  });
});
