import { AutomationEngine, CreateAccessKey, ListDeviceViews, ListPendingDevices } from '@hortus/core';
import { expect, startTestServer, type TestServer, testStore } from './harness.js';
import {
  insertOne,
  latestOf,
  type Onboarded,
  onboard,
  onboarded,
  startHttpsTestServer,
} from './box-requests.js';

describe(`Box time over HTTPS: Berlin wall clock with a Z (${testStore} store)`, () => {
  let api: TestServer;
  beforeEach(async () => {
    api = await startHttpsTestServer();
  });
  afterEach(async () => {
    await api.close();
  });

  async function boxAt(now: string): Promise<{ box: Onboarded; group: string }> {
    api.clock.advance(new Date(now).getTime() - api.clock.now().getTime());
    const group = api.unique('dst');
    await api.seed.group(group);
    await api.seed.device('24:6F:28:AA:DD:01', group);
    return { box: await onboarded(api, '1ddaa286f24'), group };
  }

  async function storedTime(group: string): Promise<string | undefined> {
    return (await latestOf(api, group))[0]?.time;
  }

  it('when a summer stamp arrives, then it is read two hours back', async () => {
    const { box, group } = await boxAt('2025-06-15T12:30:05Z');
    expect(
      (await insertOne(api, box, 'esp/air/temperature', '20.00', '2025-06-15T14:30:00.000Z')).status,
    ).to.equal(201);
    expect(await storedTime(group)).to.equal('2025-06-15T12:30:00.000Z');
  });

  it('when a winter stamp arrives, then it is read one hour back', async () => {
    const { box, group } = await boxAt('2025-01-15T12:00:05Z');
    expect(
      (await insertOne(api, box, 'esp/air/temperature', '20.00', '2025-01-15T13:00:00.000Z')).status,
    ).to.equal(201);
    expect(await storedTime(group)).to.equal('2025-01-15T12:00:00.000Z');
  });

  it('when 02:30 arrives during the first pass of the repeated hour, then it is the summer-time instant', async () => {
    const { box, group } = await boxAt('2025-10-26T00:30:05Z');
    expect(
      (await insertOne(api, box, 'esp/air/temperature', '20.00', '2025-10-26T02:30:00.000Z')).status,
    ).to.equal(201);
    expect(await storedTime(group)).to.equal('2025-10-26T00:30:00.000Z');
  });

  it('when 02:30 arrives during the second pass of the repeated hour, then it is the winter-time instant', async () => {
    const { box, group } = await boxAt('2025-10-26T01:30:05Z');
    expect(
      (await insertOne(api, box, 'esp/air/temperature', '20.00', '2025-10-26T02:30:00.000Z')).status,
    ).to.equal(201);
    expect(await storedTime(group)).to.equal('2025-10-26T01:30:00.000Z');
  });

  it('when the group says its boxes send UTC, then the stamp is taken as it is, and the skew limit applies after conversion', async () => {
    const { box, group } = await boxAt('2025-06-15T12:30:05Z');
    const set = await api.call('PUT', `/api/group/update?groupId=${group}`, {
      json: { settings: [{ boxTimeZone: 'UTC' }] },
    });
    expect(set.status).to.equal(200);

    const ahead = await insertOne(api, box, 'esp/air/temperature', '20.00', '2025-06-15T14:30:00.000Z');

    expect(ahead.status).to.equal(400);
    expect((ahead.json() as { message: string }).message).to.match(/ahead of the server's clock/u);
    expect(await storedTime(group)).to.equal(undefined);
  });
});

describe('Unknown boxes in a loop', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ UNKNOWN_DEVICE_PER_MINUTE: '5', MAX_PENDING_DEVICES: '3' });
  });
  after(async () => {
    await api.close();
  });

  it('when one address sends unknown ids beyond the limit, then it is throttled, and the pending list stays within its bound', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 7; index += 1)
      statuses.push((await onboard(api, `a${index}aa286f24`)).status);

    expect(statuses).to.deep.equal([400, 400, 400, 400, 400, 429, 429]);
    expect(await api.container.get(ListPendingDevices).execute()).to.have.length(3);
    api.clock.advance(61_000);
    expect((await onboard(api, 'a9aa286f24')).status).to.equal(400);
  });
});

describe('A box gone quiet', () => {
  let api: TestServer;
  before(async () => {
    api = await startHttpsTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when a box stops sending, then it shows as silent, and the no-data alert names it', async () => {
    const group = api.unique('quiet');
    await api.seed.group(group);
    await api.seed.device('24:6F:28:AA:CC:01', group);
    const box = await onboarded(api, '1ccaa286f24');
    expect(
      (await insertOne(api, box, 'esp/air/temperature', '20.00', '2025-06-15T14:30:00.000Z')).status,
    ).to.equal(201);

    api.clock.advance(31 * 60_000);
    await api.container.get(AutomationEngine).tick();

    const devices = (await api.get(`/api/devices?group=${group}`)).json() as {
      message: { silent: boolean }[];
    };
    expect(devices.message[0]?.silent).to.equal(true);
    const notifications = (
      await api.get(`/api/notification/latestdata/notifications?groupId=${group}`)
    ).json() as {
      message: string;
    }[];
    expect(notifications.map((notification) => notification.message)).to.deep.equal([
      `No data received from group ${group} for 30 minutes; silent: 24:6F:28:AA:CC:01 (last seen 2025-06-15 12:30:00 UTC)`,
    ]);
  });
});

describe('Device ids across groups (a key limited to one group)', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  it("when a group-limited key registers another group's id, then the answer is a success's, nothing moves, and an administrator sees the claim", async () => {
    await api.seed.group('owner');
    await api.seed.device('24:6F:28:AA:BB:01', 'owner');
    const { secret } = await api.container
      .get(CreateAccessKey)
      .execute({ name: 'squatter', kind: 'client', groups: ['squatter'] });
    const headers = { authorization: `Bearer ${secret}` };

    const taken = await api.call(
      'GET',
      '/api/devices/create?deviceId=24-6f-28-aa-bb-01&group=squatter&type=box',
      { headers },
    );
    const fresh = await api.call(
      'GET',
      '/api/devices/create?deviceId=24:6F:28:AA:BB:02&group=squatter&type=box',
      { headers },
    );

    expect(taken.status).to.equal(201);
    expect(taken.text).to.equal(fresh.text);
    const views = await api.container.get(ListDeviceViews).execute({});
    expect(views.map(({ deviceId, group }) => [deviceId, group])).to.deep.equal([
      ['24:6F:28:AA:BB:01', 'owner'],
      ['24:6F:28:AA:BB:02', 'squatter'],
    ]);
    const pending = await api.container.get(ListPendingDevices).execute();
    expect(pending.find((entry) => entry.boxId === '1bbaa286f24')).to.include({ wantedBy: 'squatter' });
  });
});
