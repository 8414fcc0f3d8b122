import 'reflect-metadata';
import { expect, use } from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { mqttConfigFromEnv, mqttModule } from '@hortus/mqtt';
import { freePort } from '@hortus/test-support';
import { harness } from './mqtt-test-support.js';

use(chaiAsPromised);

describe('MqttBridge start and configuration', () => {
  it('when the broker cannot be reached, then start rejects with a clear error within the bound', async () => {
    const port = await freePort();
    const { bridge, events } = harness({ url: `mqtt://127.0.0.1:${port}`, startTimeoutMs: 300 });
    const startedAt = Date.now();

    await expect(bridge.start()).to.be.rejectedWith(
      new RegExp(`MQTT broker mqtt://127.0.0.1:${port} not reachable within 300 ms .*ECONNREFUSED`),
    );
    expect(Date.now() - startedAt).to.be.below(2000);
    expect(events.map((event) => event['event'])).to.include('mqtt.start_failed');
    await bridge.stop();
  });

  it('when a configuration is invalid, then mqttModule names every problem', () => {
    expect(() => mqttModule({ url: 'http://broker', topicFilter: 'esp/#/x', publishPrefix: 'a/+' })).to.throw(
      /MQTT_URL must use one of .*MQTT_TOPIC is not a valid topic filter.*MQTT_PUBLISH_PREFIX/,
    );
  });

  it('when MQTT_URL is unset, then the bridge is off; when set, MQTT_TOPIC and the rest are read', () => {
    expect(mqttConfigFromEnv({ MQTT_TOPIC: 'esp/#' })).to.equal(undefined);
    expect(mqttConfigFromEnv({ MQTT_URL: ' ' })).to.equal(undefined);
    expect(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_STATE_POLL_MS: '2000' })).to.include({
      statePollMs: 2000,
    });
    expect(() =>
      mqttModule(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_STATE_POLL_MS: 'soon' }) ?? { url: '' }),
    ).to.throw(/MQTT_STATE_POLL_MS must be a whole number/);
    expect(
      mqttConfigFromEnv({
        MQTT_URL: 'mqtt://broker:1883',
        MQTT_TOPIC: 'site/esp/#',
        MQTT_USERNAME: 'hortus',
      }),
    ).to.deep.equal({ url: 'mqtt://broker:1883', topicFilter: 'site/esp/#', username: 'hortus' });
    expect(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_MAX_PAYLOAD_BYTES: '4096' })).to.include({
      maxPayloadBytes: 4096,
    });
    for (const bad of ['1k', '10', '99999999']) {
      expect(() =>
        mqttModule(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_MAX_PAYLOAD_BYTES: bad }) ?? { url: '' }),
      ).to.throw(/MQTT_MAX_PAYLOAD_BYTES must be a whole number from 64 to 4194304/);
    }
    expect(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_SHARED_GROUP: 'OFF' })).to.include({
      sharedGroup: false,
    });
    expect(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_SHARED_GROUP: 'site-a' })).to.include({
      sharedGroup: 'site-a',
    });
    expect(() =>
      mqttModule(mqttConfigFromEnv({ MQTT_URL: 'mqtt://b', MQTT_SHARED_GROUP: 'a/b' }) ?? { url: '' }),
    ).to.throw(/MQTT_SHARED_GROUP must be a name/);
  });
});
