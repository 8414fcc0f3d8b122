import { randomUUID } from 'node:crypto';
import { MqttBridge } from '@hortus/mqtt';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import { eventually, expect, startTestServer, type TestServer } from './harness.js';
import { freePort, isListening } from '@hortus/test-support';

const BROKER_URL = 'mqtt://127.0.0.1:1883';

const brokerUp = await isListening(1883);
const ci = process.env['CI'] === 'true';
const brokerMissing = `nothing listens on ${BROKER_URL}`;
const brokerSuite = brokerUp || ci ? describe : describe.skip;
const suiteNote = brokerUp
  ? ''
  : ci
    ? ` (FAILS: ${brokerMissing} and CI=true)`
    : ` (SKIPPED: ${brokerMissing}; start mosquitto, CI=true makes this fail)`;

brokerSuite(`Server with the MQTT bridge and the automation engine, against Mosquitto${suiteNote}`, () => {
  let api: TestServer;
  const clients: MqttClient[] = [];
  // A unique group keeps this run apart from others publishing on esp/# at the same time: their readings
  // only land in their own groups, which this server has no rules for.
  const group = `e2e-${randomUUID().slice(0, 8)}`;
  const actionTopic = `hortus/${group}/actions/ventilator_1`;

  before(async () => {
    if (!brokerUp) throw new Error(`Mosquitto must run for these tests under CI=true: ${brokerMissing}`);
    api = await startTestServer({
      AUTOMATIONS: 'on',
      AUTOMATION_TICK_MS: '50',
      MQTT_URL: BROKER_URL,
      MQTT_TOPIC: 'esp/#',
    });
    await eventually(() => expect(api.logger.lines.map((line) => line.event)).to.include('mqtt.started'));
  });
  after(async () => {
    // The retained action value would outlive the test on the broker: an empty retained message clears it.
    const cleaner = clients[0];
    if (cleaner?.connected === true) await cleaner.publishAsync(actionTopic, '', { qos: 1, retain: true });
    await Promise.all(clients.map((client) => client.endAsync()));
    await api?.close();
  });

  async function client(): Promise<MqttClient> {
    const connected = await connectAsync(BROKER_URL, { reconnectPeriod: 0 });
    clients.push(connected);
    return connected;
  }

  it('when a box publishes a legacy temperature above the rule, then the reading lands, the action switches, the engine logs it, an alert appears and the value is retained for boxes', async () => {
    await api.seed.group(group, [{ tempMin: 10 }, { tempMax: 30 }]);
    await api.seed.action(group, 'ventilator_1');
    const update = await api.call('POST', '/api/actions/update', {
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
    expect(update.status).to.equal(200);

    const box = await client();
    await box.publishAsync('esp/air/temperature', `31,${group}`, { qos: 1 });

    await eventually(async () => {
      const reply = await api.get(`/api/data/latestdata/Temperature?groupId=${group}`);
      expect((reply.json() as { value: number }[]).map((reading) => reading.value)).to.deep.equal([31]);
    });
    await eventually(async () => {
      const reply = await api.get(`/api/actions/current_state?group=${group}`);
      const { message } = reply.json() as { message: { object: string; value: string }[] };
      expect(message.find((action) => action.object === 'ventilator_1')?.value).to.equal('on');
    });

    // The engine logs right after it switched: on MongoDB that write can land a moment after the switch.
    const events = await eventually(async () => {
      const log = await api.get(`/api/actions/automation_log?group=${group}`);
      const { message } = log.json() as { message: Record<string, unknown>[] };
      expect(message).to.have.length(1);
      return message;
    });
    expect(events[0]).to.deep.include({
      object: 'ventilator_1',
      value: 'on',
      previousValue: 'off',
      trigger: 'sensor',
      rule: 'temperature above 28 -> on',
    });
    expect(events[0]?.['reading']).to.deep.include({ topic: 'esp/air/temperature', value: 31 });

    await eventually(async () => {
      const reply = await api.get(`/api/notification/latestdata/notifications?groupId=${group}`);
      const messages = (reply.json() as { message: string }[]).map((notification) => notification.message);
      expect(
        messages.some((message) =>
          /^Temperature \(esp\/air\/temperature\) is above its maximum of 30 °C: 31 °C at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/u.test(
            message,
          ),
        ),
      ).to.equal(true);
    });

    // Once the broker acknowledged the publish, a box that subscribes later gets the value at once.
    await eventually(() => expect(api.container.get(MqttBridge).stats().published).to.be.at.least(1));
    const lateBox = await client();
    const retained = new Promise<{ payload: string; packet: IPublishPacket }>((resolve) => {
      lateBox.on('message', (topic, payload, packet) => {
        if (topic === actionTopic) resolve({ payload: payload.toString('utf8'), packet });
      });
    });
    await lateBox.subscribeAsync(actionTopic, { qos: 1 });
    const { payload, packet } = await retained;
    expect(payload).to.equal('on');
    expect(packet.retain).to.equal(true);
  });

  it('when a box publishes a reading under esp/derived/, then the bridge refuses it and nothing is stored', async () => {
    const forger = `${group}-forged`;
    await api.seed.group(forger);
    const before = api.container.get(MqttBridge).stats().rejected;
    const box = await client();
    await box.publishAsync('esp/derived/vpd', `0.9,${forger}`, { qos: 1 });
    await eventually(() => expect(api.container.get(MqttBridge).stats().rejected).to.be.above(before));
    expect((await api.get(`/api/data/latestdata/All?groupId=${forger}`)).json()).to.deep.equal([]);
  });
});

describe('Server with MQTT_URL set while no broker can be reached', () => {
  it('then HTTP serves at once, each failed start is a warning and the bridge is retried', async () => {
    const api = await startTestServer({ MQTT_URL: `mqtt://127.0.0.1:${await freePort()}` }, undefined, {
      mqttRetryMs: 50,
      mqttStartTimeoutMs: 100,
    });
    try {
      expect((await api.get('/')).text).to.equal('Running...');
      const posted = await api.call('POST', '/api/data/readings', {
        json: { group: 'g', topic: 'esp/air/humidity', value: 50 },
      });
      expect(posted.status).to.equal(202);
      const warnings = await eventually(() => {
        const found = api.logger.lines.filter(
          (line) => line.event === 'mqtt bridge not started, HTTP keeps serving',
        );
        expect(found).to.have.length.of.at.least(2);
        return found;
      });
      expect(warnings[0]).to.include({ level: 'warn', attempt: 1, retryInMs: 50 });
      expect(warnings[0]?.['error']).to.match(/not reachable within 100 ms/u);
    } finally {
      await api.close();
    }
  });

  it('then close() cuts a start attempt short instead of waiting for its deadline', async () => {
    const api = await startTestServer({ MQTT_URL: `mqtt://127.0.0.1:${await freePort()}` });
    expect((await api.get('/')).status).to.equal(200);
    const started = Date.now();
    await api.close();
    // The attempt would wait 10 s for the broker; a cut-short close takes milliseconds.
    expect(Date.now() - started).to.be.below(5000);
    expect(api.logger.lines.map((line) => line.event)).to.include('stopped');
  });
});
