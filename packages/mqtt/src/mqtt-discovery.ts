import { createHash } from 'node:crypto';
import { type Action, nameOfTopic, type Reading } from '@hortus/core';
import { isPlainTopic } from './mqtt-config.js';

/** Where Hortus and Home Assistant meet on the broker. */
export interface DiscoveryNames {
  /** MQTT_DISCOVERY_PREFIX: Home Assistant reads `<prefix>/<component>/<node>/<object>/config`. */
  readonly discoveryPrefix: string;
  /** MQTT_PUBLISH_PREFIX: action states, sensor states, commands and the status topic live under it. */
  readonly publishPrefix: string;
  /** The installation's id: two installations on one broker must not share unique ids. */
  readonly installationId: string;
}

/** One retained message: a config, a state, or an empty payload that removes the retained one. */
export interface RetainedMessage {
  readonly topic: string;
  readonly payload: string;
}

export const AVAILABLE = 'online';
export const NOT_AVAILABLE = 'offline';

interface SensorKind {
  /** Absent where Home Assistant has none that fits: better none than a wrong one. */
  readonly deviceClass?: string;
  readonly unit: string;
}

/**
 * The sensors Hortus boxes have (SPEC's sensorTopics), recognised by a word of the topic so that
 * `esp/air/temperature` and a box's `esp/box-1/temperature` both get the unit and the device class; first
 * the series Hortus derives (docs/metrics.md), by their exact topic. Home Assistant has no device class for
 * VPD (its `pressure` is the air's), PPFD or DLI.
 */
const sensorKinds: readonly (readonly [RegExp, SensorKind])[] = [
  [/^esp\/derived\/vpd$/u, { unit: 'kPa' }],
  [/^esp\/derived\/dew_point$/u, { deviceClass: 'temperature', unit: '°C' }],
  [/^esp\/derived\/ppfd$/u, { unit: 'µmol/m²/s' }],
  [/^esp\/derived\/dli$/u, { unit: 'mol/m²/d' }],
  [/temperature/iu, { deviceClass: 'temperature', unit: '°C' }],
  [/humidity/iu, { deviceClass: 'humidity', unit: '%' }],
  [/\b(light|lux)\b/iu, { deviceClass: 'illuminance', unit: 'lx' }],
  [/moisture/iu, { deviceClass: 'moisture', unit: '%' }],
];

export function sensorKindOf(topic: string): SensorKind | undefined {
  return sensorKinds.find(([pattern]) => pattern.test(topic))?.[1];
}

/** `<publishPrefix>/status`: `online` while a server is connected, `offline` (its last will) otherwise. */
export function statusTopic(names: Pick<DiscoveryNames, 'publishPrefix'>): string {
  return `${names.publishPrefix}/status`;
}

/** The retained latest value of a group's reading topic, for Home Assistant's sensor. */
export function sensorStateTopic(names: DiscoveryNames, group: string, topic: string): string {
  return `${names.publishPrefix}/${group}/readings/${topic}`;
}

/**
 * Group and object names become topic levels and must stay one level each; a reading topic may have several
 * levels but no wildcard. Anything else is left out of discovery (and logged by the caller).
 */
export function isPublishableLevel(name: string): boolean {
  return isPlainTopic(name) && !name.includes('/');
}

/** Short, stable and safe for an id: the same names give the same id on every server and restart. */
function digest(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 12);
}

/** Home Assistant allows only `[a-zA-Z0-9_-]` in the node and object ids of a discovery topic. */
function slug(text: string): string {
  return (
    text
      .replace(/[^a-zA-Z0-9]+/gu, '_')
      .replace(/^_+|_+$/gu, '')
      .slice(0, 32) || 'x'
  );
}

function nodeId(names: DiscoveryNames): string {
  return `hortus_${slug(names.installationId)}`;
}

function deviceOf(names: DiscoveryNames, group: string): Record<string, unknown> {
  return {
    identifiers: [`${nodeId(names)}_group_${digest(group)}`],
    name: `Hortus ${group}`,
    manufacturer: 'Hortus',
    model: 'Greenhouse group',
  };
}

function availability(names: DiscoveryNames): Record<string, unknown> {
  return {
    availability_topic: statusTopic(names),
    payload_available: AVAILABLE,
    payload_not_available: NOT_AVAILABLE,
  };
}

/** The object id carries readable names and a digest of the exact ones, so `a b` and `a_b` stay apart. */
function objectId(kind: 'sensor' | 'switch', group: string, name: string): string {
  return `${kind}_${slug(group)}_${slug(name)}_${digest(kind, group, name)}`;
}

/**
 * A known topic's sensor is named for people ("Air temperature"), any other by its topic. Only `name` says
 * it: the ids and the state topic come from the topic, so existing entities keep their ids.
 */
export function sensorConfig(names: DiscoveryNames, group: string, topic: string): RetainedMessage {
  const id = objectId('sensor', group, topic);
  const kind = sensorKindOf(topic);
  const config = {
    name: nameOfTopic(topic),
    unique_id: `${nodeId(names)}_${id}`,
    state_topic: sensorStateTopic(names, group, topic),
    ...(kind === undefined
      ? {}
      : {
          ...(kind.deviceClass === undefined ? {} : { device_class: kind.deviceClass }),
          unit_of_measurement: kind.unit,
          state_class: 'measurement',
        }),
    ...availability(names),
    device: deviceOf(names, group),
  };
  return {
    topic: `${names.discoveryPrefix}/sensor/${nodeId(names)}/${id}/config`,
    payload: JSON.stringify(config),
  };
}

/** The action's retained topic is the state; `.../set` takes `on`/`off` (see MqttCommands). */
export function switchConfig(names: DiscoveryNames, group: string, object: string): RetainedMessage {
  const id = objectId('switch', group, object);
  const actionTopic = `${names.publishPrefix}/${group}/actions/${object}`;
  const config = {
    name: object,
    unique_id: `${nodeId(names)}_${id}`,
    state_topic: actionTopic,
    command_topic: `${actionTopic}/set`,
    payload_on: 'on',
    payload_off: 'off',
    state_on: 'on',
    state_off: 'off',
    qos: 1,
    ...availability(names),
    device: deviceOf(names, group),
  };
  return {
    topic: `${names.discoveryPrefix}/switch/${nodeId(names)}/${id}/config`,
    payload: JSON.stringify(config),
  };
}

/**
 * What this server last published for Home Assistant, so that a sync sends only what changed, a birth
 * message sends every config again, and an action that vanished gets its config cleared.
 */
export class DiscoveryState {
  /** Config topic -> payload, for every config published. */
  private readonly configs = new Map<string, string>();
  /** Group -> the switch config topics of its actions. */
  private readonly switches = new Map<string, Set<string>>();
  /** Group -> reading topic -> `value@time` last published as the sensor's state. */
  private readonly sensorStates = new Map<string, Map<string, string>>();
  /** Group -> reading revision as of the last sensor sync. */
  private readonly readingRevisions = new Map<string, string>();

  constructor(private readonly names: DiscoveryNames) {}

  /** Messages for a group's current actions: new or changed configs, and empty ones for vanished actions. */
  actionsOf(group: string, actions: readonly Action[], everything: boolean): RetainedMessage[] {
    const messages: RetainedMessage[] = [];
    const before = this.switches.get(group) ?? new Set<string>();
    const now = new Set<string>();
    if (isPublishableLevel(group)) {
      for (const action of actions) {
        if (!isPublishableLevel(action.object)) continue;
        const config = switchConfig(this.names, group, action.object);
        now.add(config.topic);
        messages.push(...this.config(config, everything));
      }
    }
    for (const topic of before) {
      if (!now.has(topic)) messages.push(...this.clear(topic));
    }
    if (now.size === 0) this.switches.delete(group);
    else this.switches.set(group, now);
    return messages;
  }

  /** Whether the group's readings changed since the last sensor sync (always after `forget`). */
  readingsChanged(group: string, revision: string): boolean {
    return this.readingRevisions.get(group) !== revision;
  }

  /**
   * Configs for new reading topics, states for new values of the group's latest readings, and empty configs
   * for topics no longer among them (their readings were deleted or purged).
   */
  readingsOf(
    group: string,
    revision: string,
    latest: readonly Reading[],
    everything: boolean,
  ): RetainedMessage[] {
    this.readingRevisions.set(group, revision);
    const messages: RetainedMessage[] = [];
    const states = new Map<string, string>();
    const before = this.sensorStates.get(group) ?? new Map<string, string>();
    for (const reading of isPublishableLevel(group) ? latest : []) {
      if (!isPlainTopic(reading.topic)) continue;
      messages.push(...this.config(sensorConfig(this.names, group, reading.topic), everything));
      const stamp = `${reading.value}@${reading.time.getTime()}`;
      states.set(reading.topic, stamp);
      if (everything || before.get(reading.topic) !== stamp) {
        messages.push({
          topic: sensorStateTopic(this.names, group, reading.topic),
          payload: String(reading.value),
        });
      }
    }
    for (const topic of before.keys()) {
      if (!states.has(topic)) messages.push(...this.clear(sensorConfig(this.names, group, topic).topic));
    }
    if (states.size === 0) this.sensorStates.delete(group);
    else this.sensorStates.set(group, states);
    return messages;
  }

  /** Sensor configs of groups that no longer exist. */
  groupsGone(current: ReadonlySet<string>): RetainedMessage[] {
    const messages: RetainedMessage[] = [];
    for (const [group, states] of [...this.sensorStates]) {
      if (current.has(group)) continue;
      for (const topic of states.keys()) {
        messages.push(...this.clear(sensorConfig(this.names, group, topic).topic));
      }
      this.sensorStates.delete(group);
      this.readingRevisions.delete(group);
    }
    return messages;
  }

  /** Every config published so far: Home Assistant asked for them (its birth message). */
  allConfigs(): RetainedMessage[] {
    return [...this.configs].map(([topic, payload]) => ({ topic, payload }));
  }

  /** After a reconnect the broker may have lost its retained messages: the next sync sends everything. */
  forgetReadings(): void {
    this.readingRevisions.clear();
  }

  /** An empty retained config removes the entity from Home Assistant. */
  private clear(topic: string): RetainedMessage[] {
    this.configs.delete(topic);
    return [{ topic, payload: '' }];
  }

  private config(message: RetainedMessage, everything: boolean): RetainedMessage[] {
    if (!everything && this.configs.get(message.topic) === message.payload) return [];
    this.configs.set(message.topic, message.payload);
    return [message];
  }
}
