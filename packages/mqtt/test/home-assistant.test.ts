import 'reflect-metadata';
import { createHash, randomUUID } from 'node:crypto';
import net from 'node:net';
import { expect } from 'chai';
import { connectAsync, type MqttClient } from 'mqtt';
import {
  CreateAccessKey,
  CreateAction,
  CreateGroup,
  DeleteAction,
  DeleteGroup,
  DeleteReadings,
  GetAction,
  ListActionHistory,
  READING_REPOSITORY,
  type ReadingRepository,
  RecordReadings,
} from '@hortus/core';
import { type MqttConfig, mqttConfigFromEnv, mqttModule, sensorConfig, switchConfig } from '@hortus/mqtt';
import { BROKER_URL, brokerSuite, brokerUp, eventually, type Harness, harness } from './mqtt-test-support.js';

/** Retained messages follow a SUBACK at once; this pause lets them all arrive on a loaded machine. */
const SETTLE_MS = 300;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A bridge with discovery under `prefix`, its state published every 200 ms. */
function server(prefix: string, overrides: Partial<MqttConfig> = {}): Harness {
  return harness(
    { discovery: true, discoveryPrefix: `${prefix}/homeassistant`, statePollMs: 200, ...overrides },
    prefix,
  );
}

brokerSuite(
  `Home Assistant discovery and MQTT commands against Mosquitto${brokerUp ? '' : ' (no broker)'}`,
  () => {
    let prefix: string;
    let h: Harness;
    const clients: MqttClient[] = [];

    before(() => {
      if (!brokerUp) throw new Error(`Mosquitto must run on ${BROKER_URL} for these tests under CI=true`);
    });

    beforeEach(async () => {
      // A fresh prefix per test keeps earlier retained messages out of the way.
      prefix = `hortus-ha-${randomUUID().slice(0, 8)}`;
      h = server(prefix);
      await h.container.get(CreateGroup).execute({ name: 'greenhouse' });
      await h.container.get(CreateAction).execute({ group: 'greenhouse', object: 'pump_1' });
      await h.container.get(RecordReadings).execute([
        { group: 'greenhouse', topic: 'esp/air/temperature', value: 21.5 },
        { group: 'greenhouse', topic: 'esp/ground/moisture/1', value: 40 },
        { group: 'greenhouse', topic: 'esp/co2', value: 800 },
      ]);
    });

    afterEach(async () => {
      await h.bridge.stop();
      // Retained messages outlive the test in a persistent broker: an empty retained payload deletes each.
      const left = await retained(`${prefix}/#`);
      const cleaner = await client();
      for (const topic of Object.keys(left)) await cleaner.publishAsync(topic, '', { qos: 1, retain: true });
      await Promise.all(clients.splice(0).map((each) => each.endAsync(true)));
    });

    async function client(): Promise<MqttClient> {
      const fresh = await connectAsync(BROKER_URL);
      clients.push(fresh);
      return fresh;
    }

    /** The retained messages under a filter, as a fresh subscriber receives them (empty ones are none). */
    async function retained(filter: string): Promise<Record<string, string>> {
      const fresh = await client();
      const found: Record<string, string> = {};
      fresh.on('message', (topic, payload, packet) => {
        if (packet.retain && payload.length > 0) found[topic] = payload.toString();
      });
      await fresh.subscribeAsync(filter, { qos: 1 });
      await pause(SETTLE_MS);
      await fresh.endAsync();
      return found;
    }

    /** Configs by `sensor:<reading topic>` (from its state topic: its name is for people) or `switch:<name>`. */
    const configs = async (): Promise<Record<string, Record<string, unknown>>> =>
      Object.fromEntries(
        Object.entries(await retained(`${prefix}/homeassistant/+/+/+/config`)).map(([topic, text]) => {
          const config = JSON.parse(text) as Record<string, unknown>;
          const kind = topic.split('/')[2];
          const label =
            kind === 'sensor' ? String(config['state_topic']).split('/readings/')[1] : String(config['name']);
          return [`${kind}:${label}`, config];
        }),
      );

    const actionValue = async (): Promise<string | undefined> =>
      (await h.container.get(GetAction).execute({ group: 'greenhouse', object: 'pump_1' })).value;

    it('when discovery is on, then a retained config per reading topic (unit and class for known sensors) and per action, with a device per group and availability, is published', async () => {
      await h.bridge.start();

      const found = await eventually(async () => {
        const all = await configs();
        expect(Object.keys(all)).to.have.members([
          'sensor:esp/air/temperature',
          'sensor:esp/ground/moisture/1',
          'sensor:esp/co2',
          'switch:pump_1',
        ]);
        return all;
      });
      const status = `${prefix}/hortus/status`;
      const device = found['switch:pump_1']?.['device'] as Record<string, unknown>;
      expect(found['sensor:esp/air/temperature']).to.include({
        device_class: 'temperature',
        unit_of_measurement: '°C',
        state_class: 'measurement',
        state_topic: `${prefix}/hortus/greenhouse/readings/esp/air/temperature`,
        availability_topic: status,
        payload_available: 'online',
        payload_not_available: 'offline',
      });
      expect(found['sensor:esp/ground/moisture/1']).to.include({
        device_class: 'moisture',
        unit_of_measurement: '%',
      });
      expect(found['sensor:esp/co2']).to.not.have.any.keys('device_class', 'unit_of_measurement');
      // Known topics are named for people, any other by its topic; the ids still come from the topic.
      expect(
        ['esp/air/temperature', 'esp/ground/moisture/1', 'esp/co2'].map(
          (topic) => found[`sensor:${topic}`]?.['name'],
        ),
      ).to.deep.equal(['Air temperature', 'Soil moisture 1', 'esp/co2']);
      expect(found['switch:pump_1']).to.include({
        state_topic: `${prefix}/hortus/greenhouse/actions/pump_1`,
        command_topic: `${prefix}/hortus/greenhouse/actions/pump_1/set`,
        payload_on: 'on',
        payload_off: 'off',
        availability_topic: status,
      });
      expect(device).to.include({ name: 'Hortus greenhouse', manufacturer: 'Hortus' });
      expect(found['sensor:esp/co2']?.['device']).to.deep.equal(device);
      const ids = Object.values(found).map((config) => config['unique_id']);
      expect(new Set(ids).size, 'unique ids differ').to.equal(4);

      expect(h.events.find((event) => event['event'] === 'mqtt.started')).to.include({
        discovery: true,
        commands: true,
      });
      const states = await retained(`${prefix}/hortus/#`);
      expect(states).to.include({
        [status]: 'online',
        [`${prefix}/hortus/greenhouse/readings/esp/air/temperature`]: '21.5',
        [`${prefix}/hortus/greenhouse/actions/pump_1`]: 'off',
      });
    });

    it('when the same names are published by another server of the installation, then the unique ids are the same', async () => {
      await h.bridge.start();
      const first = await eventually(async () => {
        const all = await configs();
        expect(all).to.include.keys('switch:pump_1', 'sensor:esp/co2', 'sensor:esp/air/temperature');
        return all;
      });
      const installationId = /^hortus_([0-9a-f]{8})_/u.exec(
        String(first['switch:pump_1']?.['unique_id']),
      )?.[1];
      expect(installationId).to.match(/^[0-9a-f]{8}$/u);
      const names = {
        discoveryPrefix: `${prefix}/homeassistant`,
        publishPrefix: `${prefix}/hortus`,
        installationId: installationId ?? '',
      };
      expect(JSON.parse(switchConfig(names, 'greenhouse', 'pump_1').payload)).to.deep.equal(
        first['switch:pump_1'],
      );
      expect(JSON.parse(sensorConfig(names, 'greenhouse', 'esp/co2').payload)).to.deep.equal(
        first['sensor:esp/co2'],
      );
      // A friendly name must not move an entity: its id is still made from the topic, as before names.
      const digest = createHash('sha256')
        .update(['sensor', 'greenhouse', 'esp/air/temperature'].join('\u0000'))
        .digest('hex')
        .slice(0, 12);
      expect(first['sensor:esp/air/temperature']).to.include({
        name: 'Air temperature',
        unique_id: `hortus_${installationId}_sensor_greenhouse_esp_air_temperature_${digest}`,
      });
    });

    it('when the engine has derived VPD, dew point, PPFD and DLI, then they are published like readings: VPD, PPFD and DLI with a unit and no device class, dew point as a temperature', async () => {
      const at = new Date();
      // As DeriveMetrics stores them: ingest refuses these topics from any client.
      await h.container.get<ReadingRepository>(READING_REPOSITORY).add(
        [
          ['esp/derived/vpd', 1.05],
          ['esp/derived/dew_point', 12.3],
          ['esp/derived/ppfd', 410],
          ['esp/derived/dli', 8.4],
        ].map(([topic, value]) => ({
          group: 'greenhouse',
          topic: String(topic),
          value: Number(value),
          time: at,
        })),
      );
      await h.bridge.start();

      const found = await eventually(async () => {
        const all = await configs();
        expect(all).to.include.keys('sensor:esp/derived/vpd', 'sensor:esp/derived/dli');
        return all;
      });
      const kinds = Object.fromEntries(
        ['vpd', 'dew_point', 'ppfd', 'dli'].map((name) => {
          const config = found[`sensor:esp/derived/${name}`] ?? {};
          return [
            name,
            [config['name'], config['device_class'], config['unit_of_measurement'], config['state_class']],
          ];
        }),
      );
      expect(kinds).to.deep.equal({
        vpd: ['VPD', undefined, 'kPa', 'measurement'],
        dew_point: ['Dew point', 'temperature', '°C', 'measurement'],
        ppfd: ['PPFD', undefined, 'µmol/m²/s', 'measurement'],
        dli: ['DLI', undefined, 'mol/m²/d', 'measurement'],
      });
      await eventually(async () =>
        expect(await retained(`${prefix}/hortus/greenhouse/readings/esp/derived/+`)).to.deep.equal({
          [`${prefix}/hortus/greenhouse/readings/esp/derived/vpd`]: '1.05',
          [`${prefix}/hortus/greenhouse/readings/esp/derived/dew_point`]: '12.3',
          [`${prefix}/hortus/greenhouse/readings/esp/derived/ppfd`]: '410',
          [`${prefix}/hortus/greenhouse/readings/esp/derived/dli`]: '8.4',
        }),
      );
    });

    it("when Home Assistant's birth message arrives, then every config is sent again", async () => {
      await h.bridge.start();
      await eventually(async () => expect(Object.keys(await configs())).to.have.length(4));
      const watcher = await client();
      const live: string[] = [];
      watcher.on('message', (topic, _payload, packet) => {
        if (!packet.retain) live.push(topic);
      });
      await watcher.subscribeAsync(`${prefix}/homeassistant/+/+/+/config`, { qos: 1 });
      await pause(SETTLE_MS);

      const ha = await client();
      await ha.publishAsync(`${prefix}/homeassistant/status`, 'online', { qos: 1 });

      await eventually(() => expect(live).to.have.length(4));
    });

    it('when `on` is published to <prefix>/<group>/actions/<object>/set, then the action switches (core and the retained state topic) and is counted', async () => {
      await h.bridge.start();
      const ha = await client();

      await ha.publishAsync(`${prefix}/hortus/greenhouse/actions/pump_1/set`, 'on', { qos: 1 });

      await eventually(async () => expect(await actionValue()).to.equal('on'));
      await eventually(async () =>
        expect(await retained(`${prefix}/hortus/greenhouse/actions/pump_1`)).to.deep.equal({
          [`${prefix}/hortus/greenhouse/actions/pump_1`]: 'on',
        }),
      );
      expect(h.bridge.stats().commands).to.include({ applied: 1, unknownAction: 0, badValue: 0 });
      const history = await h.container.get(ListActionHistory).execute({ group: 'greenhouse' });
      expect(history.map((entry) => [entry.object, entry.value, entry.actor])).to.deep.equal([
        ['pump_1', 'on', { kind: 'mqtt' }],
      ]);
    });

    it('when a command names an unknown action or value, or is retained, then nothing changes and each is counted, with one warning per interval', async () => {
      const ha = await client();
      const set = (object: string, value: string, retain = false): Promise<unknown> =>
        ha.publishAsync(`${prefix}/hortus/greenhouse/actions/${object}/set`, value, { qos: 1, retain });
      // A retained command reaches the server at every (re)connect, long after it was meant.
      await set('pump_1', 'on', true);
      await h.bridge.start();

      await set('nope', 'on');
      await set('pump_1', 'maybe');
      await set('pump_1', 'toggle');

      await eventually(() =>
        expect(h.bridge.stats().commands).to.include({
          unknownAction: 1,
          badValue: 2,
          retained: 1,
          applied: 0,
        }),
      );
      expect(await actionValue()).to.equal('off');
      const warnings = h.events.filter((event) => event['event'] === 'mqtt.command_ignored');
      expect(warnings).to.have.length(1);
      expect(h.bridge.stats().received, 'commands are not readings').to.equal(0);
      expect(await h.container.get(ListActionHistory).execute({ group: 'greenhouse' })).to.deep.equal([]);
    });

    it('when commands must carry a credential, then one without, or with a viewer key, is refused and counted; a client key of the group switches', async () => {
      // A server of its own: the one made for every test takes commands without credentials.
      h = server(prefix, { commandCredentials: 'required' });
      await h.container.get(CreateGroup).execute({ name: 'greenhouse' });
      await h.container.get(CreateAction).execute({ group: 'greenhouse', object: 'pump_1' });
      const keyOf = async (kind: 'viewer' | 'client'): Promise<string> =>
        `Bearer ${(await h.container.get(CreateAccessKey).execute({ name: kind, kind, groups: ['greenhouse'] })).secret}`;
      const viewer = await keyOf('viewer');
      const operator = await keyOf('client');
      await h.bridge.start();
      const ha = await connectAsync(BROKER_URL, { protocolVersion: 5 });
      clients.push(ha);
      const set = (authorization?: string): Promise<unknown> =>
        ha.publishAsync(`${prefix}/hortus/greenhouse/actions/pump_1/set`, 'on', {
          qos: 1,
          ...(authorization === undefined ? {} : { properties: { userProperties: { authorization } } }),
        });

      await set();
      await set(viewer);
      await eventually(() => expect(h.bridge.stats().commands).to.include({ refused: 2, applied: 0 }));
      expect(await actionValue()).to.equal('off');

      await set(operator);
      await eventually(() => expect(h.bridge.stats().commands).to.include({ refused: 2, applied: 1 }));
      expect(await actionValue()).to.equal('on');
    });

    it("when an action is deleted, then its switch config is cleared and the group's other configs stay", async () => {
      await h.bridge.start();
      await eventually(async () => expect(await configs()).to.have.property('switch:pump_1'));

      await h.container.get(DeleteAction).execute({ group: 'greenhouse', object: 'pump_1' });

      await eventually(async () => {
        const all = await configs();
        expect(all).to.not.have.property('switch:pump_1');
        expect(all).to.have.property('sensor:esp/air/temperature');
      });
    });

    it("when a topic's readings are deleted, then its sensor config is cleared; when the group is deleted, every config of it", async () => {
      await h.bridge.start();
      await eventually(async () => expect(Object.keys(await configs())).to.have.length(4));

      await h.container.get(DeleteReadings).execute({
        group: 'greenhouse',
        topic: 'esp/co2',
        from: '2000-01-01T00:00:00Z',
        to: '2100-01-01T00:00:00Z',
      });

      await eventually(async () =>
        expect(Object.keys(await configs())).to.have.members([
          'sensor:esp/air/temperature',
          'sensor:esp/ground/moisture/1',
          'switch:pump_1',
        ]),
      );

      await h.container.get(DeleteGroup).execute({ group: 'greenhouse', confirm: true });

      await eventually(async () => expect(await configs()).to.deep.equal({}));
    });

    it('when a new reading topic and a new action appear, then their configs are published; a new value updates the sensor state', async () => {
      await h.bridge.start();
      await eventually(async () => expect(Object.keys(await configs())).to.have.length(4));

      await h.container.get(CreateAction).execute({ group: 'greenhouse', object: 'fan_1' });
      await h.container.get(RecordReadings).execute([
        { group: 'greenhouse', topic: 'esp/air/humidity', value: 55 },
        { group: 'greenhouse', topic: 'esp/air/temperature', value: 23 },
      ]);

      await eventually(async () => {
        const all = await configs();
        expect(all).to.have.property('switch:fan_1');
        expect(all['sensor:esp/air/humidity']).to.include({
          device_class: 'humidity',
          unit_of_measurement: '%',
        });
      });
      await eventually(async () =>
        expect(await retained(`${prefix}/hortus/greenhouse/readings/esp/air/temperature`)).to.deep.equal({
          [`${prefix}/hortus/greenhouse/readings/esp/air/temperature`]: '23',
        }),
      );
    });

    it('when the server stops, then the status topic says offline; started again, online', async () => {
      await h.bridge.start();
      const status = `${prefix}/hortus/status`;
      await eventually(async () => expect(await retained(status)).to.deep.equal({ [status]: 'online' }));

      await h.bridge.stop();

      expect(await retained(status)).to.deep.equal({ [status]: 'offline' });
      h = server(prefix);
      await h.bridge.start();
      await eventually(async () => expect(await retained(status)).to.deep.equal({ [status]: 'online' }));
    });

    it('when one of two servers stops, then the status topic is back to online at once: the other still runs', async () => {
      const status = `${prefix}/hortus/status`;
      const other = server(prefix);
      await h.bridge.start();
      await other.bridge.start();
      await eventually(async () => expect(await retained(status)).to.deep.equal({ [status]: 'online' }));
      const watcher = await client();
      const seen: string[] = [];
      watcher.on('message', (_topic, payload) => seen.push(payload.toString()));
      await watcher.subscribeAsync(status, { qos: 1 });

      await other.bridge.stop();

      await eventually(() => expect(seen.slice(-2)).to.deep.equal(['offline', 'online']));
      expect(await retained(status)).to.deep.equal({ [status]: 'online' });
      expect(h.bridge.stats().received, 'status messages are not readings').to.equal(0);
    });

    it("when the server's connection is lost without a goodbye, then the broker publishes its last will: offline", async () => {
      const sockets = new Set<net.Socket>();
      const relay = net.createServer((downstream) => {
        const upstream = net.connect(1883, '127.0.0.1');
        for (const socket of [downstream, upstream]) {
          sockets.add(socket);
          socket.on('error', () => socket.destroy());
        }
        downstream.pipe(upstream).pipe(downstream);
      });
      await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
      const port = (relay.address() as net.AddressInfo).port;
      const cut = server(prefix, { url: `mqtt://127.0.0.1:${port}`, reconnectPeriodMs: 60_000 });
      const status = `${prefix}/hortus/status`;
      try {
        await cut.bridge.start();
        await eventually(async () => expect(await retained(status)).to.deep.equal({ [status]: 'online' }));

        // The broker's side is cut without a DISCONNECT, as when the server's process is killed.
        for (const socket of sockets) if (socket.remotePort === 1883) socket.destroy();

        await eventually(async () => expect(await retained(status)).to.deep.equal({ [status]: 'offline' }));
      } finally {
        for (const socket of sockets) socket.destroy();
        await cut.bridge.stop();
        await new Promise((resolve) => relay.close(resolve));
      }
    });

    it('when discovery and MQTT_COMMANDS are off (the default), then a `set` message changes nothing and no config is published', async () => {
      const plain = server(prefix, { discovery: false });
      await plain.container.get(CreateAction).execute({ group: 'greenhouse', object: 'pump_1' });
      try {
        await plain.bridge.start();
        const ha = await client();
        await ha.publishAsync(`${prefix}/hortus/greenhouse/actions/pump_1/set`, 'on', { qos: 1 });
        await pause(SETTLE_MS);

        expect(
          (await plain.container.get(GetAction).execute({ group: 'greenhouse', object: 'pump_1' })).value,
        ).to.equal('off');
        expect(plain.bridge.stats().commands).to.equal(undefined);
        expect(await configs()).to.deep.equal({});
      } finally {
        await plain.bridge.stop();
      }
    });

    it('when MQTT_DISCOVERY, MQTT_DISCOVERY_PREFIX and MQTT_COMMANDS are set, then they are read, and bad values are named', () => {
      expect(
        mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_DISCOVERY: 'ON', MQTT_DISCOVERY_PREFIX: 'ha' }),
      ).to.include({ discovery: true, discoveryPrefix: 'ha' });
      expect(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_COMMANDS: 'off' })).to.include({
        commands: false,
      });
      expect(() =>
        mqttModule(
          mqttConfigFromEnv({
            MQTT_URL: 'mqtt://b',
            MQTT_DISCOVERY: 'yes',
            MQTT_COMMANDS: '1',
            MQTT_DISCOVERY_PREFIX: 'ha/#',
          }) ?? { url: '' },
        ),
      ).to.throw(/MQTT_DISCOVERY must be on or off.*MQTT_COMMANDS must be on or off.*MQTT_DISCOVERY_PREFIX/u);
    });
  },
);
