// Only the validation module of mqtt: reading the configuration must not load the MQTT client.
import { validateTopic } from 'mqtt/lib/validations';

export interface MqttConfig {
  /** Broker address, e.g. `mqtt://127.0.0.1:1883`; credentials belong in username/password. */
  readonly url: string;
  /** Which sensor topics to ingest; the MQTT topic is stored as the reading's topic, unchanged. */
  readonly topicFilter?: string;
  /** Unset: `hortus-<installation id>-<random per process>` (see mqttIdentityOf). */
  readonly clientId?: string;
  /** Action changes go to `<publishPrefix>/<group>/actions/<object>`. */
  readonly publishPrefix?: string;
  readonly username?: string;
  readonly password?: string;
  /** How long start() waits for the broker before it gives up. */
  readonly startTimeoutMs?: number;
  /** Pause between reconnect attempts after the broker is lost. */
  readonly reconnectPeriodMs?: number;
  /**
   * How often the store's action revisions are read, so that changes made by other processes (the CLI,
   * another server) reach the retained topics too (MQTT_STATE_POLL_MS).
   */
  readonly statePollMs?: number;
  /**
   * The shared-subscription group (MQTT 5 `$share/<group>/<filter>`): the broker hands each sensor message
   * to one server of the group, so several servers store it once. `false` subscribes plainly (MQTT 3.1.1);
   * unset, the installation's own random name (see mqttIdentityOf).
   */
  readonly sharedGroup?: string | false;
  /**
   * Larger messages are dropped unread (MQTT_MAX_PAYLOAD_BYTES): parsing a huge or deeply nested payload
   * would stall the process, and no box sends more than a few readings in one message.
   */
  readonly maxPayloadBytes?: number;
  /** A warning a box can cause with every message (malformed, another group named) is shown once per interval. */
  readonly warnIntervalMs?: number;
  /**
   * Home Assistant MQTT discovery (MQTT_DISCOVERY=on): retained configs for a sensor per reading topic and a
   * switch per action, plus the `<publishPrefix>/status` availability topic. A text other than on/off is
   * kept as read, for mqttConfigProblems to report.
   */
  readonly discovery?: boolean | string;
  /** Where Home Assistant looks for configs (MQTT_DISCOVERY_PREFIX, default `homeassistant`). */
  readonly discoveryPrefix?: string;
  /**
   * Accept `<publishPrefix>/<group>/actions/<object>/set` (MQTT_COMMANDS=on|off). Unset: on exactly when
   * discovery is on, so a broker without access rules does not start taking commands on an upgrade.
   */
  readonly commands?: boolean | string;
  /**
   * Whether a command must carry a credential (MQTT_COMMAND_CREDENTIALS): `optional` (the default: a command
   * without one is left to the broker's access list, one with an MQTT 5 `authorization` user property is
   * decided like an HTTP switch, so a viewer's is refused) or `required` (every command needs one that may
   * switch its group). Another text is kept for mqttConfigProblems.
   */
  readonly commandCredentials?: string;
}

export const MQTT_CONFIG = Symbol.for('hortus.MqttConfig');

export const mqttDefaults = {
  topicFilter: 'esp/#',
  publishPrefix: 'hortus',
  startTimeoutMs: 10_000,
  reconnectPeriodMs: 1000,
  statePollMs: 5000,
  warnIntervalMs: 60_000,
  maxPayloadBytes: 256 * 1024,
  discoveryPrefix: 'homeassistant',
} as const;

/** The HTTP ingest body bound: a larger MQTT bound would let MQTT in what HTTP refuses. */
const MAX_PAYLOAD_BYTES_CEILING = 4 * 1024 * 1024;

const brokerProtocols = ['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'ws:', 'wss:'];

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads MQTT_URL (the bridge is off when it is unset or empty), MQTT_TOPIC (default `esp/#`),
 * MQTT_CLIENT_ID, MQTT_USERNAME, MQTT_PASSWORD, MQTT_PUBLISH_PREFIX (default `hortus`) and
 * MQTT_STATE_POLL_MS (default 5000; a text that is no whole number is left for mqttConfigProblems),
 * MQTT_MAX_PAYLOAD_BYTES (default 262144, likewise) and
 * MQTT_SHARED_GROUP (default: the installation's random name; `off` subscribes without a shared subscription),
 * MQTT_DISCOVERY (on/off, default off), MQTT_DISCOVERY_PREFIX (default `homeassistant`) and MQTT_COMMANDS
 * (on/off, default: as MQTT_DISCOVERY), MQTT_COMMAND_CREDENTIALS (optional/required, default optional).
 */
export function mqttConfigFromEnv(env: Env = process.env): MqttConfig | undefined {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const url = read('MQTT_URL');
  if (url === undefined) return undefined;
  const optional = {
    topicFilter: read('MQTT_TOPIC'),
    clientId: read('MQTT_CLIENT_ID'),
    username: read('MQTT_USERNAME'),
    // Passwords may legitimately start or end with spaces.
    password: env['MQTT_PASSWORD'] === '' ? undefined : env['MQTT_PASSWORD'],
    publishPrefix: read('MQTT_PUBLISH_PREFIX'),
  };
  const statePoll = read('MQTT_STATE_POLL_MS');
  const maxPayload = read('MQTT_MAX_PAYLOAD_BYTES');
  const shared = read('MQTT_SHARED_GROUP');
  const discovery = read('MQTT_DISCOVERY');
  const commands = read('MQTT_COMMANDS');
  const discoveryPrefix = read('MQTT_DISCOVERY_PREFIX');
  const commandCredentials = read('MQTT_COMMAND_CREDENTIALS')?.toLowerCase();
  return {
    ...(commandCredentials === undefined ? {} : { commandCredentials }),
    url,
    ...(discovery === undefined ? {} : { discovery: onOff(discovery) }),
    ...(commands === undefined ? {} : { commands: onOff(commands) }),
    ...(discoveryPrefix === undefined ? {} : { discoveryPrefix }),
    ...(shared === undefined ? {} : { sharedGroup: shared.toLowerCase() === 'off' ? false : shared }),
    ...(maxPayload === undefined
      ? {}
      : { maxPayloadBytes: /^\d+$/u.test(maxPayload) ? Number(maxPayload) : Number.NaN }),
    ...(statePoll === undefined
      ? {}
      : { statePollMs: /^\d+$/u.test(statePoll) ? Number(statePoll) : Number.NaN }),
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

/** Every problem of a configuration, so a composition root can report them together with its own. */
export function mqttConfigProblems(config: MqttConfig): string[] {
  const problems: string[] = [];
  let protocol: string | undefined;
  try {
    protocol = new URL(config.url).protocol;
  } catch {
    problems.push(`MQTT_URL must be a URL such as mqtt://127.0.0.1:1883`);
  }
  if (protocol !== undefined && !brokerProtocols.includes(protocol)) {
    problems.push(`MQTT_URL must use one of ${brokerProtocols.join(' ')} (got ${protocol})`);
  }
  const filter = config.topicFilter ?? mqttDefaults.topicFilter;
  if (filter === '' || !validateTopic(filter)) problems.push(`MQTT_TOPIC is not a valid topic filter`);
  const prefix = config.publishPrefix ?? mqttDefaults.publishPrefix;
  if (!isPlainTopic(prefix)) problems.push('MQTT_PUBLISH_PREFIX must be a topic without wildcards');
  const poll = config.statePollMs;
  if (poll !== undefined && !(Number.isSafeInteger(poll) && poll >= 100 && poll <= 3_600_000)) {
    problems.push('MQTT_STATE_POLL_MS must be a whole number of milliseconds from 100 to 3600000');
  }
  const maxPayload = config.maxPayloadBytes;
  if (
    maxPayload !== undefined &&
    !(Number.isSafeInteger(maxPayload) && maxPayload >= 64 && maxPayload <= MAX_PAYLOAD_BYTES_CEILING)
  ) {
    problems.push(`MQTT_MAX_PAYLOAD_BYTES must be a whole number from 64 to ${MAX_PAYLOAD_BYTES_CEILING}`);
  }
  const group = config.sharedGroup;
  if (typeof group === 'string' && !(isPlainTopic(group) && !group.includes('/'))) {
    problems.push('MQTT_SHARED_GROUP must be a name without `/`, `+` or `#` (or `off`)');
  }
  for (const [name, value] of [
    ['MQTT_DISCOVERY', config.discovery],
    ['MQTT_COMMANDS', config.commands],
  ] as const) {
    if (value !== undefined && typeof value !== 'boolean') problems.push(`${name} must be on or off`);
  }
  const credentials = config.commandCredentials;
  if (credentials !== undefined && !['optional', 'required'].includes(credentials)) {
    problems.push('MQTT_COMMAND_CREDENTIALS must be optional or required');
  }
  const discoveryPrefix = config.discoveryPrefix ?? mqttDefaults.discoveryPrefix;
  if (!isPlainTopic(discoveryPrefix)) {
    problems.push('MQTT_DISCOVERY_PREFIX must be a topic without wildcards');
  }
  for (const name of ['startTimeoutMs', 'reconnectPeriodMs', 'warnIntervalMs'] as const) {
    const value = config[name];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      problems.push(`${name} must be a positive integer`);
    }
  }
  return problems;
}

/** `on`/`off` (any case) as a boolean; any other text unchanged, for mqttConfigProblems. */
function onOff(text: string): boolean | string {
  const lower = text.toLowerCase();
  if (lower === 'on') return true;
  if (lower === 'off') return false;
  return text;
}

/** Whether discovery and commands are on, with commands following discovery unless set. */
export function homeAssistantSwitches(config: MqttConfig): { discovery: boolean; commands: boolean } {
  const discovery = config.discovery === true;
  return { discovery, commands: config.commands === undefined ? discovery : config.commands === true };
}

/** A topic one may publish to: not empty, no wildcards, no NUL. */
export function isPlainTopic(topic: string): boolean {
  return topic !== '' && !/[#+]/u.test(topic) && !topic.includes('\u0000');
}
