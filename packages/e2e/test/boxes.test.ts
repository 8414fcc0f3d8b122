import {
  DeleteAction,
  AutomationEngine,
  ClaimDevice,
  ListPendingDevices,
  RotateDeviceKey,
  SetDeviceLock,
} from '@hortus/core';
import { expect, type Reply, type TestServer, testStore } from './harness.js';
import {
  find,
  insertOne,
  latestOf,
  type Onboarded,
  onboard,
  onboarded,
  REFUSED,
  startHttpsTestServer,
  toBoxEndpoint,
  TOPICS,
} from './box-requests.js';

describe(`Boxes of firmware 1.0.4: onboarding over plain HTTP, the box endpoint over HTTPS without certificate checks (${testStore} store)`, () => {
  let api: TestServer;
  before(async () => {
    api = await startHttpsTestServer({ UNKNOWN_DEVICE_PER_MINUTE: '1000' });
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
        // The request's host name with the HTTPS listener's port (a free one here: HTTPS_PORT=0).
        const httpsHost = new URL(api.running.httpsUrl ?? 'https://none').host;
        expect(body).to.deep.include({ group, host: httpsHost, url: '/api/box/v1' });
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

    it('when a device is locked, then its box still onboards from its own address (a reboot), its key keeps working, and unlocking changes nothing for it', async () => {
      const { sent } = await registeredBox();
      const box = await onboarded(api, sent);
      await api.container.get(SetDeviceLock).execute({ id: sent, locked: true });

      const reboot = await onboard(api, sent);
      const posted = await insertOne(api, box, 'esp/air/temperature', '21.37', '2025-06-15T14:29:00.000Z');

      expect(reboot.status).to.equal(200);
      expect((reboot.json() as Onboarded).apiKey).to.equal(box.apiKey);
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
      expect(actions.documents.map(({ object, value }) => ({ object, value }))).to.deep.equal([
        { object: 'ventilator_1', value: 'on' },
        // The relays the group has no action for: answered off, so no relay stays on for a missing action.
        { object: 'pump_1', value: 'off' },
        { object: 'led_1', value: 'off' },
        { object: 'ventilator_2', value: 'off' },
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
        { of: group, object: 'ventilator_1', value: 'off' },
        { of: group, object: 'ventilator_2', value: 'off' },
      ]);
      const named = await find(api, box, { filter: { group: other.group } });
      expect(
        (named.json() as { documents: { group: string }[] }).documents.map((document) => document.group),
      ).to.deep.equal([group, group, group, group]);
      const narrowed = await find(api, box, { filter: { object: 'pump_1' } });
      expect(
        (narrowed.json() as { documents: { object: string }[] }).documents.map((document) => document.object),
      ).to.deep.equal(['pump_1']);
      // The documented operators: $eq, $ne, $in, $nin, alone or together.
      const objectsOf = async (filter: Record<string, unknown>): Promise<string[]> => {
        const found = await find(api, box, { filter });
        expect(found.status, JSON.stringify(filter)).to.equal(200);
        return (found.json() as { documents: { object: string }[] }).documents
          .map(({ object }) => object)
          .sort();
      };
      expect(await objectsOf({ object: { $eq: 'pump_1' } })).to.deep.equal(['pump_1']);
      expect(await objectsOf({ object: { $ne: 'pump_1' } })).to.deep.equal([
        'led_1',
        'ventilator_1',
        'ventilator_2',
      ]);
      expect(await objectsOf({ value: { $in: ['on', 'auto'] } })).to.deep.equal(['pump_1']);
      expect(
        await objectsOf({
          object: { $nin: ['pump_1', 'ventilator_1', 'ventilator_2'] },
          value: { $ne: 'on' },
        }),
      ).to.deep.equal(['led_1']);
      expect(await objectsOf({ object: { $in: ['led_1', 'pump_1'], $ne: 'led_1' } })).to.deep.equal([
        'pump_1',
      ]);
    });

    it('when a box is moved to a group without led_1, or its action is deleted, then find answers led_1 off, so the relay does not stay on', async () => {
      const { group, sent } = await registeredBox();
      const other = api.unique('box-group');
      await api.seed.group(other);
      await api.seed.action(group, 'led_1', 'on');
      await api.seed.action(other, 'pump_1', 'on');
      const box = await onboarded(api, sent);
      const relays = async () =>
        Object.fromEntries(
          ((await find(api, box)).json() as { documents: { object: string; value: string }[] }).documents.map(
            ({ object, value }) => [object, value],
          ),
        );
      expect(await relays()).to.deep.equal({
        led_1: 'on',
        pump_1: 'off',
        ventilator_1: 'off',
        ventilator_2: 'off',
      });

      await api.container.get(ClaimDevice).execute({ id: sent, group: other, move: true });
      expect(await relays(), 'after the move').to.deep.equal({
        pump_1: 'on',
        led_1: 'off',
        ventilator_1: 'off',
        ventilator_2: 'off',
      });
      await api.container.get(DeleteAction).execute({ group: other, object: 'pump_1' });
      expect((await relays())['pump_1'], 'after the delete').to.equal('off');
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
      toBoxEndpoint(api, box, action, { 'Content-Type': type, 'api-key': box.apiKey }, body);

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
