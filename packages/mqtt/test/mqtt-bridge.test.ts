import 'reflect-metadata';
import { expect, use } from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { connectAsync, type MqttClient } from 'mqtt';
import sinon from 'sinon';
import {
  ACTION_REPOSITORY,
  type ActionRepository,
  CreateAction,
  CreateDevice,
  FindDevice,
  GetLatestReading,
  QueryReadings,
  RecordReadings,
  SetActionValue,
  SERVER_SECRET_REPOSITORY,
  type ServerSecretRepository,
} from '@hortus/core';
import {
  BROKER_URL,
  BrokerProxy,
  brokerSuite,
  eventually,
  harness,
  type Harness,
  requireBroker,
  suiteNote,
} from './mqtt-test-support.js';

use(chaiAsPromised);

brokerSuite(`MqttBridge against Mosquitto${suiteNote}`, () => {
  let h: Harness;
  let box: MqttClient;
  const clients: MqttClient[] = [];

  before(requireBroker);

  beforeEach(async () => {
    h = harness();
    await h.bridge.start();
    box = await connectAsync(BROKER_URL, { reconnectPeriod: 100 });
    clients.push(box);
  });

  afterEach(async () => {
    await h.bridge.stop();
    await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
    sinon.restore();
  });

  const latest = async (topic: string): Promise<number | undefined> =>
    (await h.container.get(GetLatestReading).execute({ group: 'greenhouse', topic }))[0]?.value;

  it('when a box publishes the legacy text `23.5,greenhouse`, then the reading is stored under that topic', async () => {
    const topic = `${h.prefix}/esp/air/temperature`;
    await box.publishAsync(topic, '23.5,greenhouse', { qos: 1 });

    await eventually(async () => expect(await latest(topic)).to.equal(23.5));
    expect(h.bridge.stats()).to.include({ received: 1, accepted: 1, rejected: 0, malformed: 0 });
  });

  it('when two servers subscribe in one shared group, then each message reaches one of them; with the group off, both', async () => {
    const send = async (topic: string): Promise<void> => {
      for (let i = 0; i < 10; i += 1) await box.publishAsync(topic, `${i},greenhouse`, { qos: 1 });
    };
    const sharedGroup = `g-${h.prefix}`;
    const filter = { topicFilter: `${h.prefix}/shared/#` };
    const shared = [harness({ ...filter, sharedGroup }), harness({ ...filter, sharedGroup })];
    const plain = [harness({ ...filter, sharedGroup: false }), harness({ ...filter, sharedGroup: false })];
    const servers = [...shared, ...plain];
    try {
      for (const server of servers) await server.bridge.start();
      await send(`${h.prefix}/shared/t`);

      const received = (group: readonly Harness[]): number[] =>
        group.map((server) => server.bridge.stats().received);
      await eventually(() => expect(received(plain)).to.deep.equal([10, 10]));
      await eventually(() => expect(received(shared).reduce((a, b) => a + b)).to.equal(10));
      expect(h.bridge.stats().received, 'the default bridge has its own filter').to.equal(0);
    } finally {
      for (const server of servers) await server.bridge.stop();
    }
  });

  const started = (server: Harness): Record<string, unknown> | undefined =>
    server.events.find((event) => event['event'] === 'mqtt.started');
  const secrets = (server: Harness): ServerSecretRepository =>
    server.container.get<ServerSecretRepository>(SERVER_SECRET_REPOSITORY);

  it("when MQTT_SHARED_GROUP and MQTT_CLIENT_ID are unset, then it subscribes in the installation's random group and names itself by the installation and a random part, both kept in the store", async () => {
    const group = await secrets(h).findOrCreate('installation.mqtt-shared-group', 'not-this-one');
    const installation = await secrets(h).findOrCreate('installation.id', 'not-this-one');

    expect(group).to.match(/^[0-9a-f]{32}$/u);
    expect(installation).to.match(/^[0-9a-f]{8}$/u);
    expect(started(h)).to.include({ sharedGroup: `hortus-${group}` });
    expect(started(h)?.['clientId']).to.match(new RegExp(`^hortus-${installation}-[0-9a-f]{16}$`, 'u'));
  });

  it('when a broker user joins the shared subscription under the old default name `hortus`, then the server still receives every message', async () => {
    const rogue = await connectAsync(BROKER_URL, { protocolVersion: 5 });
    clients.push(rogue);
    await rogue.subscribeAsync(`$share/hortus/${h.prefix}/esp/#`, { qos: 1 });
    // It may read the topics (the access list allows what it allows); it must not take the server's share.
    let copies = 0;
    rogue.on('message', () => (copies += 1));
    const topic = `${h.prefix}/esp/air/temperature`;
    for (let i = 0; i < 10; i += 1) await box.publishAsync(topic, `${i},greenhouse`, { qos: 1 });

    await eventually(() => expect([h.bridge.stats().received, copies]).to.deep.equal([10, 10]));
  });

  it('when two servers of one installation start (one store), then they share its group, each message reaching one, with client ids of their own that both stay connected', async () => {
    const filter = { topicFilter: `${h.prefix}/pair/#` };
    const servers = [harness(filter), harness(filter)];
    for (const server of servers) {
      // What one shared store answers to both.
      await secrets(server).findOrCreate('installation.mqtt-shared-group', `g${h.prefix}`);
      await secrets(server).findOrCreate('installation.id', 'cafe0001');
    }
    try {
      for (const server of servers) await server.bridge.start();
      for (let i = 0; i < 10; i += 1)
        await box.publishAsync(`${h.prefix}/pair/t`, `${i},greenhouse`, { qos: 1 });

      const received = (): number => servers.reduce((sum, server) => sum + server.bridge.stats().received, 0);
      await eventually(() => expect(received()).to.equal(10));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received(), 'each message once').to.equal(10);

      const ids = servers.map((server) => started(server)?.['clientId']);
      expect(new Set(ids).size).to.equal(2);
      for (const id of ids) expect(id).to.match(/^hortus-cafe0001-[0-9a-f]{16}$/u);
      expect(servers.map((server) => started(server)?.['sharedGroup'])).to.deep.equal([
        `hortus-g${h.prefix}`,
        `hortus-g${h.prefix}`,
      ]);
      expect(servers.flatMap((server) => server.events.map((event) => event['event']))).not.to.include(
        'mqtt.offline',
      );
    } finally {
      for (const server of servers) await server.bridge.stop();
    }
  });

  it('when boxes publish JSON (one reading, an array, the compact form), then every reading is stored', async () => {
    const humidity = `${h.prefix}/esp/air/humidity`;
    const moisture = `${h.prefix}/esp/ground/moisture/1`;
    const lux = `${h.prefix}/esp/ground/light/lux`;
    await box.publishAsync(humidity, JSON.stringify({ group: 'greenhouse', value: 61.5 }), { qos: 1 });
    await box.publishAsync(
      moisture,
      JSON.stringify([
        { group: 'greenhouse', value: 40, time: '2024-05-01T10:00:00Z' },
        { group: 'greenhouse', value: '41.5', time: '2024-05-01T11:00:00Z' },
      ]),
      { qos: 1 },
    );
    await box.publishAsync(
      `${h.prefix}/esp/box-7`,
      JSON.stringify({
        group: 'greenhouse',
        values: { [lux]: 870, [humidity]: 62 },
        // Newer than the other humidity reading (stamped on arrival), within the allowed clock skew.
        time: new Date(Date.now() + 60_000).toISOString(),
      }),
      { qos: 1 },
    );

    await eventually(() => expect(h.bridge.stats().accepted).to.equal(5));
    const moistures = await h.container.get(QueryReadings).execute({ group: 'greenhouse', topic: moisture });
    expect(moistures.map((reading) => reading.value)).to.deep.equal([41.5, 40]);
    expect(await latest(lux)).to.equal(870);
    expect(await latest(humidity)).to.equal(62);
  });

  it('when messages are malformed or carry invalid readings, then they are counted and logged and later ones are still stored', async () => {
    const topic = `${h.prefix}/esp/air/temperature`;
    for (const payload of ['garbage', '{"group": "greenhouse", ', 'warm,greenhouse', '19.5,greenhouse']) {
      await box.publishAsync(topic, payload, { qos: 1 });
    }

    await eventually(async () => expect(await latest(topic)).to.equal(19.5));
    expect(h.bridge.stats()).to.include({ received: 4, malformed: 2, rejected: 1, accepted: 1 });
    const malformed = h.events.filter((event) => event['event'] === 'mqtt.message_malformed');
    expect(
      malformed.map((event) => event['payload']),
      'once per interval',
    ).to.deep.equal(['garbage']);
    expect(malformed[0]).to.include({ level: 'warn', topic });
    const rejected = h.events.find((event) => event['event'] === 'mqtt.readings_rejected');
    expect(rejected).to.deep.include({ rejected: 1 });
    expect(() => JSON.stringify(h.events)).not.to.throw();
  });

  it("when a registered box's own topic carries a payload naming another group, then the reading is stored under the box's group", async () => {
    // The documented ACL lets box-<mac> write only <filter prefix>/box-<mac>/#: that level names the publisher.
    await h.container
      .get(CreateDevice)
      .execute({ deviceId: '24:6F:28:AA:00:01', group: 'greenhouse', type: 'esp32' });
    const own = `${h.prefix}/esp/box-24:6F:28:AA:00:01/air/temperature`;
    // The box's own spelling of its MAC (reversed, no separators) names it too.
    const ownShort = `${h.prefix}/esp/box-100aa286f24/air/humidity`;
    const demoLatest = async (topic: string): Promise<number | undefined> =>
      (await h.container.get(GetLatestReading).execute({ group: 'demo', topic }))[0]?.value;

    await box.publishAsync(own, JSON.stringify({ group: 'demo', value: 99 }), { qos: 1 });
    await box.publishAsync(ownShort, '55,demo', { qos: 1 });
    await box.publishAsync(`${h.prefix}/esp/box-24:6F:28:AA:00:01/air/co2`, JSON.stringify({ value: 410 }), {
      qos: 1,
    });

    await eventually(() => expect(h.bridge.stats().accepted).to.equal(3));
    expect(await latest(own)).to.equal(99);
    expect(await latest(ownShort)).to.equal(55);
    expect(await latest(`${h.prefix}/esp/box-24:6F:28:AA:00:01/air/co2`), "no group: the box's").to.equal(
      410,
    );
    expect(await demoLatest(own)).to.equal(undefined);
    expect(await demoLatest(ownShort)).to.equal(undefined);
    expect(h.bridge.stats()).to.include({ regrouped: 2 });
    const overridden = h.events.filter((event) => event['event'] === 'mqtt.group_overridden');
    expect(overridden, 'once per interval').to.have.length(1);
    expect(overridden[0]).to.include({ level: 'warn', topic: own, named: 'demo', group: 'greenhouse' });
  });

  it("when the device registry cannot be read, then a box topic's readings are not stored under the payload's group but counted as failed", async () => {
    sinon.stub(h.container.get(FindDevice), 'execute').rejects(new Error('store away'));
    const own = `${h.prefix}/esp/box-24:6F:28:AA:00:02/air/temperature`;
    await box.publishAsync(own, '30,demo', { qos: 1 });

    await eventually(() => expect(h.bridge.stats()).to.include({ received: 1, failed: 1, accepted: 0 }));
    expect((await h.container.get(GetLatestReading).execute({ group: 'demo', topic: own }))[0]).to.equal(
      undefined,
    );
    expect(h.events.find((event) => event['event'] === 'mqtt.ingest_failed')).to.include({
      error: 'store away',
    });
  });

  it('when a topic names no registered box, then the group the payload names is kept (the documented legacy behaviour)', async () => {
    await h.container.get(CreateDevice).execute({ deviceId: 'air', group: 'greenhouse', type: 'esp32' });
    const shared = `${h.prefix}/esp/air/temperature`;
    const unknownBox = `${h.prefix}/esp/box-aa:bb:cc:dd:ee:ff/air/temperature`;
    await box.publishAsync(shared, '21,demo', { qos: 1 });
    await box.publishAsync(unknownBox, '22,demo', { qos: 1 });

    await eventually(() => expect(h.bridge.stats().accepted).to.equal(2));
    const demo = h.container.get(GetLatestReading);
    expect((await demo.execute({ group: 'demo', topic: shared }))[0]?.value).to.equal(21);
    expect((await demo.execute({ group: 'demo', topic: unknownBox }))[0]?.value).to.equal(22);
    expect(h.bridge.stats()).to.include({ regrouped: 0 });
  });

  it('when a message is larger than the payload bound (256 KiB by default), then it is dropped unread and counted, and later ones are stored', async () => {
    const topic = `${h.prefix}/esp/air/temperature`;
    // What stalled the server for seconds when parsed: a deeply nested array, here just over the bound.
    const depth = (256 * 1024) / 2 + 1;
    await box.publishAsync(topic, '['.repeat(depth) + ']'.repeat(depth), { qos: 1 });
    await box.publishAsync(topic, '18.5,greenhouse', { qos: 1 });

    await eventually(async () => expect(await latest(topic)).to.equal(18.5));
    expect(h.bridge.stats()).to.include({ received: 2, oversized: 1, malformed: 0, accepted: 1 });
    expect(h.events.find((event) => event['event'] === 'mqtt.message_oversized')).to.include({
      level: 'warn',
      topic,
      bytes: depth * 2,
      limit: 256 * 1024,
    });
  });

  it('when a flood of malformed messages arrives, then each is counted but one warning line is written per interval', async () => {
    const topic = `${h.prefix}/esp/air/temperature`;
    await Promise.all(Array.from({ length: 500 }, () => box.publishAsync(topic, 'garbage', { qos: 1 })));

    await eventually(() => expect(h.bridge.stats().malformed).to.equal(500));
    const lines = h.events.filter((event) => event['event'] === 'mqtt.message_malformed');
    expect(lines).to.have.length(1);
  });

  it('when many messages arrive together, then they are recorded in a few batches, none lost', async () => {
    const topic = `${h.prefix}/esp/ground/moisture/2`;
    const execute = sinon.spy(h.container.get(RecordReadings), 'execute');
    const start = Date.UTC(2024, 0, 1);
    await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        box.publishAsync(
          topic,
          JSON.stringify({ group: 'greenhouse', value: i, time: new Date(start + i * 1000).toISOString() }),
          { qos: 1 },
        ),
      ),
    );

    await eventually(() => expect(h.bridge.stats().accepted).to.equal(600));
    const stored = await h.container.get(QueryReadings).execute({ group: 'greenhouse', topic, count: 1000 });
    expect(stored).to.have.length(600);
    expect(execute.callCount).to.be.within(2, 30);
  });

  it('when stopped while readings wait for their batch, then they are stored before stop resolves', async () => {
    const topic = `${h.prefix}/esp/air/pressure`;
    await box.publishAsync(topic, '1013,greenhouse', { qos: 1 });
    while (h.bridge.stats().received === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(h.bridge.stats().accepted).to.equal(0);

    await h.bridge.stop();
    expect(h.bridge.stats().accepted).to.equal(1);
    expect(await latest(topic)).to.equal(1013);
  });

  it('when the broker holds a retained sensor message, then it is skipped as an old sample and live ones are stored', async () => {
    const late = harness();
    const topic = `${late.prefix}/esp/air/temperature`;
    await box.publishAsync(topic, '18,greenhouse', { qos: 1, retain: true });
    try {
      await late.bridge.start();
      await box.publishAsync(topic, '19,greenhouse', { qos: 1 });
      await eventually(() => expect(late.bridge.stats()).to.include({ received: 2, accepted: 1 }));
      const stored = await late.container.get(QueryReadings).execute({ group: 'greenhouse', topic });
      expect(stored.map((reading) => reading.value)).to.deep.equal([19]);
      expect(late.events.map((event) => event['event'])).to.include('mqtt.retained_skipped');
    } finally {
      await box.publishAsync(topic, '', { qos: 1, retain: true });
      await late.bridge.stop();
    }
  });

  it('when an action value is set, then a fresh subscriber receives it retained on <prefix>/<group>/actions/<object>', async () => {
    await h.container.get(CreateAction).execute({ group: 'greenhouse', object: 'pump_1' });
    await h.container
      .get(SetActionValue)
      .execute({ group: 'greenhouse', object: 'pump_1', value: 'on', actor: { kind: 'cli' } });
    await eventually(() => expect(h.bridge.stats().published).to.equal(1));

    const topic = `${h.prefix}/hortus/greenhouse/actions/pump_1`;
    const fresh = await connectAsync(BROKER_URL);
    clients.push(fresh);
    const received = new Promise<{ payload: string; retain: boolean }>((resolve) =>
      fresh.on('message', (_topic, payload, packet) =>
        resolve({ payload: payload.toString(), retain: packet.retain }),
      ),
    );
    await fresh.subscribeAsync(topic, { qos: 1 });
    expect(await received).to.deep.equal({ payload: 'on', retain: true });
    // Retained messages outlive the test in a persistent broker: an empty retained payload deletes it.
    await fresh.publishAsync(topic, '', { qos: 1, retain: true });
  });

  /** The retained messages under a filter, as a fresh subscriber receives them (empty ones are none). */
  async function retainedActions(filter: string): Promise<Record<string, string>> {
    const fresh = await connectAsync(BROKER_URL);
    clients.push(fresh);
    const retained: Record<string, string> = {};
    fresh.on('message', (topic, payload, packet) => {
      if (packet.retain && payload.length > 0) retained[topic] = payload.toString();
    });
    await fresh.subscribeAsync(filter, { qos: 1 });
    // Retained messages follow the SUBACK at once; a short pause lets them all arrive.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await fresh.endAsync();
    return retained;
  }

  async function clearRetained(topics: readonly string[]): Promise<void> {
    for (const topic of topics) await box.publishAsync(topic, '', { qos: 1, retain: true });
  }

  it('when actions exist before the bridge starts, then it publishes every current value retained', async () => {
    const early = harness();
    await early.container.get(CreateAction).execute({ group: 'greenhouse', object: 'pump_1' });
    await early.container.get(CreateAction).execute({ group: 'greenhouse', object: 'fan_1' });
    await early.container.get(CreateAction).execute({ group: 'cellar', object: 'light_1' });
    await early.container
      .get(SetActionValue)
      .execute({ group: 'greenhouse', object: 'fan_1', value: 'on', actor: { kind: 'cli' } });
    const root = `${early.prefix}/hortus`;
    try {
      await early.bridge.start();

      await eventually(async () =>
        expect(await retainedActions(`${root}/+/actions/#`)).to.deep.equal({
          [`${root}/greenhouse/actions/pump_1`]: 'off',
          [`${root}/greenhouse/actions/fan_1`]: 'on',
          [`${root}/cellar/actions/light_1`]: 'off',
        }),
      );
      expect(early.events.find((event) => event['event'] === 'mqtt.states_published')).to.include({
        actions: 3,
        everything: true,
      });
    } finally {
      await early.bridge.stop();
      await clearRetained([
        `${root}/greenhouse/actions/pump_1`,
        `${root}/greenhouse/actions/fan_1`,
        `${root}/cellar/actions/light_1`,
      ]);
    }
  });

  it('when another process changes an action in the store (no in-process event), then the poll publishes it, once', async () => {
    const polled = harness({ statePollMs: 100 });
    const root = `${polled.prefix}/hortus`;
    const repository = polled.container.get<ActionRepository>(ACTION_REPOSITORY);
    await polled.container.get(CreateAction).execute({ group: 'greenhouse', object: 'pump_1' });
    try {
      await polled.bridge.start();
      await eventually(() => expect(polled.bridge.stats().published).to.equal(1));

      // Straight to the repository: what the CLI or another server does to a shared store.
      await repository.setValue('greenhouse', 'pump_1', 'on');
      await eventually(async () =>
        expect(await retainedActions(`${root}/greenhouse/actions/#`)).to.deep.equal({
          [`${root}/greenhouse/actions/pump_1`]: 'on',
        }),
      );
      // A change of the automations alone moves the revision but not the value: nothing is sent again.
      await repository.setAutomations('greenhouse', 'pump_1', []);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(polled.bridge.stats().published).to.equal(2);
    } finally {
      await polled.bridge.stop();
      await clearRetained([`${root}/greenhouse/actions/pump_1`]);
    }
  });

  it('when the broker connection is lost, then it reconnects, resubscribes, sends the action changes made meanwhile and ingest resumes', async () => {
    const proxy = new BrokerProxy();
    await proxy.open();
    const cut = harness({ url: `mqtt://127.0.0.1:${proxy.port}` });
    const topic = `${cut.prefix}/esp/air/temperature`;
    const latest = async (): Promise<number | undefined> =>
      (await cut.container.get(GetLatestReading).execute({ group: 'greenhouse', topic }))[0]?.value;
    try {
      await cut.bridge.start();
      await box.publishAsync(topic, '20,greenhouse', { qos: 1 });
      await eventually(async () => expect(await latest()).to.equal(20));

      await proxy.close();
      await eventually(() => expect(cut.events.map((event) => event['event'])).to.include('mqtt.offline'));
      await cut.container.get(CreateAction).execute({ group: 'greenhouse', object: 'led_1' });
      await cut.container
        .get(SetActionValue)
        .execute({ group: 'greenhouse', object: 'led_1', value: 'on', actor: { kind: 'cli' } });
      await proxy.open();

      // The resubscription follows the reconnect shortly; publishing until a reading lands covers that gap.
      await eventually(async () => {
        await box.publishAsync(topic, '21,greenhouse', { qos: 1 });
        expect(await latest()).to.equal(21);
      });
      // The change queued while offline, then every value again after the reconnect.
      await eventually(() => expect(cut.bridge.stats().published).to.be.at.least(2));
      expect(cut.events.filter((event) => event['event'] === 'mqtt.connected')).to.have.length(2);
      expect(await retainedActions(`${cut.prefix}/hortus/greenhouse/actions/#`)).to.deep.equal({
        [`${cut.prefix}/hortus/greenhouse/actions/led_1`]: 'on',
      });
    } finally {
      await cut.bridge.stop();
      await proxy.close();
      await box.publishAsync(`${cut.prefix}/hortus/greenhouse/actions/led_1`, '', { qos: 1, retain: true });
    }
  });
});
