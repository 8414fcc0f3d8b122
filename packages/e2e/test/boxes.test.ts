import {
  AutomationEngine,
  ClaimDevice,
  CreateAccessKey,
  ListDeviceViews,
  ListPendingDevices,
  RotateDeviceKey,
  SetDeviceLock,
} from '@hortus/core';
import { expect, startTestServer, type Reply, type TestServer } from './harness.js';

/**
 * Replays what firmware 1.0.4 sends (COMPAT "Boxes"), byte for byte where it matters: the onboarding
 * headers, the insertOne and find bodies with their Content-Types, and stamps in Berlin wall-clock time
 * labelled UTC. The test server's clock stands at 2025-06-15T12:30:00Z (summer: Berlin is UTC+2).
 */
const REFUSED = '{"message":"Invalid device ID or device not found"}';
const TOPICS = [
  'esp/air/temperature',
  'esp/air/humidity',
  'esp/air/pressure',
  'esp/air/gasResistance',
  'esp/ground/moisture/1',
  'esp/ground/moisture/2',
  'esp/ground/light/colorTemp',
  'esp/ground/light/lux',
  'esp/ground/light/red',
  'esp/ground/light/green',
  'esp/ground/light/blue',
  'esp/ground/light/clear',
];

function onboard(api: TestServer, deviceId: string, lastactive = '5230'): Promise<Reply> {
  return api.call('GET', '/api/hardware', {
    headers: { deviceId, updateVersion: '1.0.4', lastactive, 'Content-Type': 'application/json' },
  });
}

interface Onboarded {
  readonly group: string;
  readonly host: string;
  readonly url: string;
  readonly apiKey: string;
}

async function onboarded(api: TestServer, deviceId: string): Promise<Onboarded> {
  const reply = await onboard(api, deviceId);
  expect(reply.status, reply.text).to.equal(200);
  return reply.json() as Onboarded;
}

/** The firmware's insertOne: the value as text with two decimals, the stamp as a $date. */
function insertOne(
  api: TestServer,
  box: Onboarded,
  topic: string,
  value: string,
  stamp: string,
  group = box.group,
): Promise<Reply> {
  return api.call('POST', `${box.url}/action/insertOne`, {
    headers: { 'Content-Type': 'application/ejson', Accept: 'application/json', 'api-key': box.apiKey },
    body: JSON.stringify({
      collection: 'datas',
      database: 'Website',
      dataSource: 'Cluster0',
      document: { topic, group, value, time: { $date: stamp } },
    }),
  });
}

/** The firmware's find: no filter at all. */
function find(
  api: TestServer,
  box: Pick<Onboarded, 'url' | 'apiKey'>,
  extra: Record<string, unknown> = {},
): Promise<Reply> {
  return api.call('POST', `${box.url}/action/find`, {
    headers: { 'Content-Type': 'application/json', 'api-key': box.apiKey },
    body: JSON.stringify({ collection: 'actions', database: 'Website', dataSource: 'Cluster0', ...extra }),
  });
}

type Latest = { topic: string; value: number; time: string; group: string };

async function latestOf(api: TestServer, group: string): Promise<Latest[]> {
  const reply = await api.get(`/api/data/latestdata/All?groupId=${group}`);
  expect(reply.status).to.equal(200);
  return reply.json() as Latest[];
}

describe('Boxes of firmware 1.0.4 over plain HTTP', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ UNKNOWN_DEVICE_PER_MINUTE: '1000' });
  });
  after(async () => {
    await api.close();
  });

  /** A registered box of a fresh group: its label MAC is 24:6F:28:AA:<n>:01, so it sends 1<n>aa286f24. */
  let boxes = 0;
  async function registeredBox(
    form: (label: string) => string = (label) => label,
  ): Promise<{ group: string; sent: string; label: string }> {
    boxes += 1;
    const byte = boxes.toString(16).padStart(2, '0');
    const label = `24:6F:28:AA:${byte.toUpperCase()}:01`;
    const group = api.unique('box-group');
    await api.seed.group(group);
    await api.seed.device(form(label), group);
    return { group, sent: `1${byte}aa286f24`, label };
  }

  describe('onboarding', () => {
    for (const [name, form] of [
      ['as printed on the label', (label: string) => label],
      ['with dashes in lower case', (label: string) => label.toLowerCase().replaceAll(':', '-')],
      ['as bare hex', (label: string) => label.toLowerCase().replaceAll(':', '')],
    ] as const) {
      it(`when a box registered ${name} onboards with its reversed id, then it gets its group, the HTTPS endpoint and a key`, async () => {
        const { group, sent } = await registeredBox(form);

        const reply = await onboard(api, sent);

        expect(reply.status).to.equal(200);
        const body = reply.json() as Onboarded;
        expect(body).to.deep.include({ group, host: '127.0.0.1:8443', url: '/api/box/v1' });
        expect(body.apiKey).to.match(/^hb_[\w-]{40,}$/u);
      });
    }

    it('when the same box onboards again (a reboot), then it gets the same key back, and the onboardings are listed with address, version and uptime', async () => {
      const { group, sent, label } = await registeredBox();
      const first = await onboarded(api, sent);
      api.clock.advance(60_000);
      const second = await onboarded(api, sent);

      expect(second.apiKey).to.equal(first.apiKey);
      const reply = await api.get(`/api/devices?group=${group}`);
      const [device] = (reply.json() as { message: Record<string, unknown>[] }).message;
      expect(device).to.deep.include({
        deviceId: label,
        macAddress: label,
        boxId: sent,
        firmwareVersion: '1.0.4',
        locked: false,
      });
      expect(device?.['onboardings']).to.have.length(2);
      expect((device?.['onboardings'] as { address: string }[])[0]?.address).to.match(/127\.0\.0\.1/u);
      const now = api.clock.now().getTime();
      expect(device?.['lastSeen']).to.equal(new Date(now).toISOString());
      expect(device?.['bootedAt']).to.equal(new Date(now - 5230).toISOString());
    });

    it('when an unknown box onboards, then it gets exactly the refusal the firmware knows, and is listed as pending until claimed', async () => {
      const sent = '1f0ee286f24';

      const reply = await onboard(api, sent);

      expect(reply.status).to.equal(400);
      expect(reply.text).to.equal(REFUSED);
      const pending = await api.container.get(ListPendingDevices).execute();
      const entry = pending.find((item) => item.boxId === sent);
      expect(entry).to.deep.include({ label: '24:6F:28:EE:F0:01', firmwareVersion: '1.0.4', attempts: 1 });
      expect(entry?.address).to.match(/127\.0\.0\.1/u);

      const group = api.unique('claimed');
      await api.container.get(ClaimDevice).execute({ id: sent, group });
      const claimed = await onboarded(api, sent);

      expect(claimed.group).to.equal(group);
      const after = await api.container.get(ListPendingDevices).execute();
      expect(after.map((item) => item.boxId)).not.to.include(sent);
    });

    it('when a device is locked, then its onboardings are refused as an unknown one is, its key keeps working, and unlocking lets it in again', async () => {
      const { sent } = await registeredBox();
      const box = await onboarded(api, sent);
      await api.container.get(SetDeviceLock).execute({ id: sent, locked: true });

      const refused = await onboard(api, sent);
      const posted = await insertOne(api, box, 'esp/air/temperature', '21.37', '2025-06-15T14:29:00.000Z');

      expect(refused.status).to.equal(400);
      expect(refused.text).to.equal(REFUSED);
      expect(posted.status).to.equal(201);
      await api.container.get(SetDeviceLock).execute({ id: sent, locked: false });
      expect((await onboard(api, sent)).status).to.equal(200);
    });

    it('when the deviceId header is missing or not an id, then the box is refused and nothing is listed', async () => {
      const before = (await api.container.get(ListPendingDevices).execute()).length;

      const missing = await api.call('GET', '/api/hardware', { headers: { updateVersion: '1.0.4' } });
      const garbage = await onboard(api, '<script>');

      expect(missing.text).to.equal(REFUSED);
      expect(garbage.text).to.equal(REFUSED);
      expect(await api.container.get(ListPendingDevices).execute()).to.have.length(before);
    });
  });

  describe('readings and actions', () => {
    it('when a box posts its 12 readings of a round, then latestdata/All shows each at the real instant, under its group, and a rule fires', async () => {
      const { group, sent } = await registeredBox();
      await api.seed.action(group, 'ventilator_1');
      const rule = await api.call('POST', '/api/actions/update', {
        json: {
          group,
          object: 'ventilator_1',
          automations: [
            {
              timeAutomations: [],
              sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28' }],
            },
          ],
        },
      });
      expect(rule.status).to.equal(200);
      const box = await onboarded(api, sent);

      // 12:29:40 UTC is 14:29:40 in Berlin summer time, which the box writes with a Z.
      const replies = await Promise.all(
        TOPICS.map((topic, index) =>
          insertOne(api, box, topic, (28 + index / 100 + 1).toFixed(2), '2025-06-15T14:29:40.000Z'),
        ),
      );

      for (const reply of replies) {
        expect(reply.status, reply.text).to.equal(201);
        expect((reply.json() as { insertedId: string }).insertedId).to.match(/^[0-9a-f]{24}$/u);
      }
      const latest = await latestOf(api, group);
      expect(latest.map((reading) => reading.topic).sort()).to.deep.equal([...TOPICS].sort());
      for (const reading of latest) expect(reading.time).to.equal('2025-06-15T12:29:40.000Z');
      expect(latest.find((reading) => reading.topic === 'esp/air/temperature')?.value).to.equal(29);

      await api.container.get(AutomationEngine).tick();
      const actions = (await find(api, box)).json() as { documents: { object: string; value: string }[] };
      expect(actions.documents).to.deep.equal([
        { ...actions.documents[0], object: 'ventilator_1', value: 'on', group },
      ]);
    });

    it("when a value is set through the web client's route, then the next find returns it, and only the device's group's actions", async () => {
      const { group, sent } = await registeredBox();
      const other = await registeredBox();
      await api.seed.action(group, 'pump_1');
      await api.seed.action(group, 'led_1');
      await api.seed.action(other.group, 'pump_1', 'on');
      const box = await onboarded(api, sent);

      const set = await api.get(`/api/actions/?group=${group}&object=pump_1&value=on`);
      const reply = await find(api, box);

      expect(set.status).to.equal(200);
      expect(reply.status).to.equal(200);
      const { documents } = reply.json() as { documents: { group: string; object: string; value: string }[] };
      expect(
        documents
          .map(({ group: of, object, value }) => ({ of, object, value }))
          .sort((a, b) => a.object.localeCompare(b.object)),
      ).to.deep.equal([
        { of: group, object: 'led_1', value: 'off' },
        { of: group, object: 'pump_1', value: 'on' },
      ]);
      const named = await find(api, box, { filter: { group: other.group } });
      expect(
        (named.json() as { documents: { group: string }[] }).documents.map((document) => document.group),
      ).to.deep.equal([group, group]);
      const narrowed = await find(api, box, { filter: { object: 'pump_1' } });
      expect(
        (narrowed.json() as { documents: { object: string }[] }).documents.map((document) => document.object),
      ).to.deep.equal(['pump_1']);
    });

    it("when a document names another group, then the reading is stored under the device's own group and the other group gets nothing", async () => {
      const { group, sent } = await registeredBox();
      const other = await registeredBox();
      const box = await onboarded(api, sent);

      const reply = await insertOne(
        api,
        box,
        'esp/air/humidity',
        '55.00',
        '2025-06-15T14:29:00.000Z',
        other.group,
      );

      expect(reply.status).to.equal(201);
      expect((await latestOf(api, group)).map((reading) => reading.value)).to.deep.equal([55]);
      expect(await latestOf(api, other.group)).to.deep.equal([]);
    });

    it('when insertMany carries a bad document, then nothing of it is stored and the answer names the reason', async () => {
      const { group, sent } = await registeredBox();
      const box = await onboarded(api, sent);
      const document = (value: unknown): unknown => ({
        topic: 'esp/air/temperature',
        group,
        value,
        time: { $date: '2025-06-15T14:20:00.000Z' },
      });

      const refused = await api.call('POST', `${box.url}/action/insertMany`, {
        headers: { 'Content-Type': 'application/ejson', 'api-key': box.apiKey },
        body: JSON.stringify({
          collection: 'datas',
          documents: [
            document({ $numberDouble: '20.5' }),
            { ...(document('abc') as object), topic: 'esp/air/humidity' },
          ],
        }),
      });
      const stored = await api.call('POST', `${box.url}/action/insertMany`, {
        headers: { 'Content-Type': 'application/ejson', 'api-key': box.apiKey },
        body: JSON.stringify({
          collection: 'datas',
          documents: [
            document({ $numberDouble: '20.5' }),
            { ...(document({ $numberInt: '40' }) as object), topic: 'esp/air/humidity' },
          ],
        }),
      });

      expect(refused.status).to.equal(400);
      expect((refused.json() as { message: string }).message).to.match(
        /document 1: value must be a finite number/u,
      );
      expect(stored.status).to.equal(201);
      expect((stored.json() as { insertedIds: string[] }).insertedIds).to.have.length(2);
      expect((await latestOf(api, group)).map((reading) => reading.value).sort()).to.deep.equal([20.5, 40]);
    });
  });

  describe('keys', () => {
    it('when a key is rotated, then the old key keeps working until the box onboards again; then only the new one does', async () => {
      const { sent } = await registeredBox();
      const old = await onboarded(api, sent);
      await api.container.get(RotateDeviceKey).execute({ id: sent });

      expect((await find(api, old)).status).to.equal(200);
      const renewed = await onboarded(api, sent);

      expect(renewed.apiKey).not.to.equal(old.apiKey);
      expect((await find(api, renewed)).status).to.equal(200);
      const refused = await find(api, old);
      expect(refused.status).to.equal(401);
    });

    it('when a key is revoked on purpose, then it stops at once, and the box gets a new one at its next boot', async () => {
      const { sent } = await registeredBox();
      const old = await onboarded(api, sent);
      await api.container.get(RotateDeviceKey).execute({ id: sent, revoke: true });

      expect(
        (await insertOne(api, old, 'esp/air/temperature', '20.00', '2025-06-15T14:29:00.000Z')).status,
      ).to.equal(401);
      const renewed = await onboarded(api, sent);
      expect((await find(api, renewed)).status).to.equal(200);
    });

    it('when the api-key is missing or wrong, then the box endpoint answers 401 and stores nothing', async () => {
      const { group, sent } = await registeredBox();
      const box = await onboarded(api, sent);

      const missing = await insertOne(
        api,
        { ...box, apiKey: '' },
        'esp/air/temperature',
        '20.00',
        '2025-06-15T14:29:00.000Z',
      );
      const wrong = await insertOne(
        api,
        { ...box, apiKey: `${box.apiKey.slice(0, -2)}xx` },
        'esp/air/temperature',
        '20.00',
        '2025-06-15T14:29:00.000Z',
      );

      expect(missing.status).to.equal(401);
      expect(wrong.status).to.equal(401);
      expect((wrong.json() as { message: string }).message).to.match(/api-key/u);
      expect(await latestOf(api, group)).to.deep.equal([]);
    });
  });

  describe('bad input', () => {
    let box: Onboarded;
    let group: string;
    before(async () => {
      const registered = await registeredBox();
      group = registered.group;
      box = await onboarded(api, registered.sent);
    });

    const post = (action: string, body: string, type = 'application/ejson'): Promise<Reply> =>
      api.call('POST', `${box.url}/action/${action}`, {
        headers: { 'Content-Type': type, 'api-key': box.apiKey },
        body,
      });

    it('when a value is not a number, then 400 names it and nothing is stored', async () => {
      const reply = await insertOne(api, box, 'esp/air/temperature', 'warm', '2025-06-15T14:29:00.000Z');

      expect(reply.status).to.equal(400);
      expect((reply.json() as { message: string }).message).to.equal('value must be a finite number');
      expect(await latestOf(api, group)).to.deep.equal([]);
    });

    it('when the body is over the limit, then 400 says so', async () => {
      const reply = await post(
        'insertOne',
        JSON.stringify({ collection: 'datas', document: { topic: 'x'.repeat(70_000) } }),
      );

      expect(reply.status).to.equal(400);
      expect((reply.json() as { message: string }).message).to.match(/larger than 65536 bytes/u);
    });

    for (const [name, action, body, reason] of [
      [
        'another collection',
        'insertOne',
        { collection: 'users', document: {} },
        /collection must be "datas"/u,
      ],
      ['find on readings', 'find', { collection: 'datas' }, /collection must be "actions"/u],
      [
        'another action',
        'deleteMany',
        { collection: 'datas', filter: {} },
        /action must be one of: insertOne, insertMany, find/u,
      ],
      [
        'an unknown operator',
        'find',
        { collection: 'actions', filter: { object: { $where: 'x' } } },
        /not supported/u,
      ],
      [
        'a filter on another field',
        'find',
        { collection: 'actions', filter: { automations: 1 } },
        /may name only object and value/u,
      ],
      [
        'a stamp that is no date',
        'insertOne',
        {
          collection: 'datas',
          document: { topic: 'esp/air/temperature', value: '1', time: { $date: 'soon' } },
        },
        /document.time/u,
      ],
      ['no document', 'insertOne', { collection: 'datas' }, /document is required/u],
    ] as const) {
      it(`when the request asks for ${name}, then 400 says why and nothing is stored`, async () => {
        const reply = await post(action, JSON.stringify(body));

        expect(reply.status, reply.text).to.equal(400);
        expect((reply.json() as { message: string }).message).to.match(reason);
        expect(await latestOf(api, group)).to.deep.equal([]);
      });
    }

    it('when the body is not JSON, then 400; when it is form-encoded, then 415', async () => {
      expect((await post('insertOne', '{"collection":')).status).to.equal(400);
      expect((await post('insertOne', 'a=b', 'application/x-www-form-urlencoded')).status).to.equal(415);
    });
  });
});

describe('Box time: Berlin wall clock with a Z', () => {
  let api: TestServer;
  beforeEach(async () => {
    api = await startTestServer();
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
    api = await startTestServer();
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
      `No data received from group ${group} for 30 minutes; silent: 24:6F:28:AA:CC:01 (last seen 2025-06-15T12:30:00.000Z)`,
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
