import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { use } from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Container, ContainerModule } from 'inversify';
import { memoryStoreModule } from '@hortus/adapter-memory';
import { createCoreModule, defaultCoreSettings, LOGGER, type Logger } from '@hortus/core';
import { identityModule, identitySettingsFromEnv, nodeCryptoModule } from '@hortus/identity';
import { MqttBridge, type MqttConfig, mqttModule } from '@hortus/mqtt';
import { isListening, TcpRelay } from '@hortus/test-support';

use(chaiAsPromised);

/** The MQTT suites' broker, bridge harness and waiting. */
export const BROKER_PORT = 1883;
export const BROKER_URL = `mqtt://127.0.0.1:${BROKER_PORT}`;
export const WAIT_MS = 5000;

/** Polls until the check passes (returns without throwing), failing with its last error after WAIT_MS. */
export async function eventually<T>(check: () => Promise<T> | T): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** A relay to the broker that the test can cut and restore, to play a lost broker. */
export class BrokerProxy extends TcpRelay {
  constructor() {
    super(BROKER_PORT);
  }
}

export interface Harness {
  readonly container: Container;
  readonly bridge: MqttBridge;
  readonly events: Record<string, unknown>[];
  readonly prefix: string;
}

/** The events the bridge logs, as `{ level, event, ...fields }`. */
export function capturingLogger(events: Record<string, unknown>[]): Logger {
  const log =
    (level: string) =>
    (event: string, fields: Readonly<Record<string, unknown>> = {}): void => {
      events.push({ level, event, ...fields });
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A bridge over a memory store under `prefix`: a fresh one keeps parallel runs and earlier retained messages apart. */
export function harness(
  overrides: Partial<MqttConfig> = {},
  prefix = `hortus-test-${randomUUID().slice(0, 8)}`,
): Harness {
  const events: Record<string, unknown>[] = [];
  const container = new Container();
  container.load(
    createCoreModule({ ...defaultCoreSettings, timeZone: 'UTC' }),
    memoryStoreModule(),
    // Commands that carry a credential are decided by core, which checks keys and log-in tokens.
    nodeCryptoModule(),
    identityModule(identitySettingsFromEnv({})),
    mqttModule({
      url: BROKER_URL,
      topicFilter: `${prefix}/esp/#`,
      publishPrefix: `${prefix}/hortus`,
      reconnectPeriodMs: 200,
      ...overrides,
    }),
    new ContainerModule(({ bind }) => {
      bind<Logger>(LOGGER).toConstantValue(capturingLogger(events));
    }),
  );
  return { container, bridge: container.get(MqttBridge), events, prefix };
}

export const brokerUp = await isListening(BROKER_PORT);
export const ci = process.env['CI'] === 'true';
export const brokerSuite = brokerUp || ci ? describe : describe.skip;
export const brokerMissing = `nothing listens on ${BROKER_URL}`;
export const suiteNote = brokerUp
  ? ''
  : ci
    ? ` (FAILS: ${brokerMissing} and CI=true)`
    : ` (SKIPPED: ${brokerMissing}; start mosquitto, CI=true makes this fail)`;
export const requireBroker = (): void => {
  if (!brokerUp) throw new Error(`Mosquitto must run for these tests under CI=true: ${brokerMissing}`);
};
