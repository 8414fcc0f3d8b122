import { ContainerModule } from 'inversify';
import { HomeAssistantLink } from './home-assistant-link.js';
import { MqttBridge } from './mqtt-bridge.js';
import { MQTT_CONFIG, type MqttConfig, mqttConfigProblems } from './mqtt-config.js';

/** Binds the bridge (a singleton: it owns the connection) with its configuration; it logs to core's LOGGER. */
export function mqttModule(config: MqttConfig): ContainerModule {
  const problems = mqttConfigProblems(config);
  if (problems.length > 0) throw new Error(`Invalid MQTT configuration: ${problems.join('; ')}`);
  return new ContainerModule(({ bind }) => {
    bind<MqttConfig>(MQTT_CONFIG).toConstantValue(config);
    bind(HomeAssistantLink).toSelf().inSingletonScope();
    bind(MqttBridge).toSelf().inSingletonScope();
  });
}
