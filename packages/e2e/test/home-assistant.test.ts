import { randomUUID } from 'node:crypto';
import { connectAsync, type MqttClient } from 'mqtt';
import { isListening } from '@hortus/test-support';
import { DeleteAction } from '@hortus/core';
import { eventually, expect, startTestServer, type TestServer } from './harness.js';

const BROKER_URL = 'mqtt://127.0.0.1:1883';
const brokerUp = await isListening(1883);
const ci = process.env['CI'] === 'true';
const brokerSuite = brokerUp || ci ? describe : describe.skip;

brokerSuite(`Server with MQTT_DISCOVERY=on, against Mosquitto${brokerUp ? '' : ' (no broker)'}`, () => {
  let api: TestServer;
  let ha: MqttClient;
  // Unique prefixes keep this run's retained messages apart from every other run on the broker.
  const run = `e2e-ha-${randomUUID().slice(0, 8)}`;
  const group = 'greenhouse';
  const set = `${run}/hortus/${group}/actions/pump_1/set`;

  before(async () => {
    if (!brokerUp) throw new Error(`Mosquitto must run on ${BROKER_URL} for these tests under CI=true`);
    api = await startTestServer({
      MQTT_URL: BROKER_URL,
      MQTT_TOPIC: `${run}/esp/#`,
      MQTT_PUBLISH_PREFIX: `${run}/hortus`,
      MQTT_DISCOVERY: 'on',
      MQTT_DISCOVERY_PREFIX: `${run}/homeassistant`,
      MQTT_STATE_POLL_MS: '200',
    });
    await api.seed.group(group);
    await api.seed.action(group, 'pump_1');
    await eventually(() => expect(api.logger.lines.map((line) => line.event)).to.include('mqtt.started'));
    ha = await connectAsync(BROKER_URL, { reconnectPeriod: 0 });
  });

  after(async () => {
    await api?.close();
    if (ha === undefined) return;
    // Retained messages would outlive the run: an empty retained payload deletes each.
    const left: string[] = [];
    ha.on('message', (topic, payload) => {
      if (payload.length > 0) left.push(topic);
    });
    await ha.subscribeAsync(`${run}/#`, { qos: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const topic of left) await ha.publishAsync(topic, '', { qos: 1, retain: true });
    await ha.endAsync();
  });

  const valueOverHttp = async (): Promise<string | undefined> => {
    const reply = await api.get(`/api/actions/current_state?group=${group}`);
    const { message } = reply.json() as { message: { object: string; value: string }[] };
    return message.find((action) => action.object === 'pump_1')?.value;
  };
  const commands = async (result: string): Promise<number | undefined> => {
    const text = (await api.get('/metrics')).text;
    const line = text
      .split('\n')
      .find((each) => each.startsWith(`hortus_mqtt_commands_total{result="${result}"}`));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  it('when Home Assistant publishes `on` to the action’s set topic, then the HTTP API shows the action on and /metrics counts it', async () => {
    await ha.publishAsync(set, 'on', { qos: 1 });

    await eventually(async () => expect(await valueOverHttp()).to.equal('on'));
    // The bridge counts a command once its switch is done, which a loaded machine may show after the value.
    await eventually(async () => expect(await commands('applied')).to.equal(1));
  });

  it('when a command names an unknown action or value, then the HTTP API shows nothing changed and /metrics counts them as ignored', async () => {
    await ha.publishAsync(`${run}/hortus/${group}/actions/nope/set`, 'off', { qos: 1 });
    await ha.publishAsync(set, 'half', { qos: 1 });

    await eventually(async () => expect(await commands('bad_value')).to.equal(1));
    expect(await commands('unknown_action')).to.equal(1);
    expect(await valueOverHttp()).to.equal('on');
  });

  it('when an action is deleted (as `hortus action delete` does), then its discovery config is cleared on the broker', async () => {
    const configs = async (): Promise<string[]> => {
      const watcher = await connectAsync(BROKER_URL, { reconnectPeriod: 0 });
      const found: string[] = [];
      watcher.on('message', (topic, payload) => {
        if (payload.length > 0) found.push(topic);
      });
      await watcher.subscribeAsync(`${run}/homeassistant/switch/+/+/config`, { qos: 1 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await watcher.endAsync();
      return found;
    };
    await eventually(async () => expect(await configs()).to.have.length(1));

    // No HTTP route deletes actions: `hortus action delete` runs this use case.
    await api.container.get(DeleteAction).execute({ group, object: 'pump_1' });

    await eventually(async () => expect(await configs()).to.deep.equal([]));
  });
});
