import { ContainerModule } from 'inversify';
import { MqttBridge } from './mqtt-bridge.js';
import {
  MQTT_CONFIG,
  MQTT_LOGGER,
  type MqttConfig,
  mqttConfigProblems,
  type MqttLogger,
} from './mqtt-config.js';

/** Binds the bridge (a singleton: it owns the connection) with its configuration and logger. */
export function mqttModule(config: MqttConfig, logger: MqttLogger): ContainerModule {
  const problems = mqttConfigProblems(config);
  if (problems.length > 0) throw new Error(`Invalid MQTT configuration: ${problems.join('; ')}`);
  return new ContainerModule(({ bind }) => {
    bind<MqttConfig>(MQTT_CONFIG).toConstantValue(config);
    bind<MqttLogger>(MQTT_LOGGER).toConstantValue(logger);
    bind(MqttBridge).toSelf().inSingletonScope();
  });
}
