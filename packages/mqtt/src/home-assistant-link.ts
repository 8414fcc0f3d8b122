import { inject, injectable } from 'inversify';
import { type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt';
import {
  type Action,
  AuthorizeCredential,
  GetLatestReadingsOfGroup,
  GetRevision,
  InstallationValues,
  ListGroups,
  LOGGER,
  type Logger,
  SetActionValue,
} from '@hortus/core';
import { COMMAND_CREDENTIAL_PROPERTY, type MqttCommandCounts, MqttCommands } from './mqtt-commands.js';
import { homeAssistantSwitches, MQTT_CONFIG, type MqttConfig, mqttDefaults } from './mqtt-config.js';
import {
  AVAILABLE,
  type DiscoveryNames,
  DiscoveryState,
  NOT_AVAILABLE,
  type RetainedMessage,
  statusTopic,
} from './mqtt-discovery.js';
import { WarningGate } from './warning-gate.js';

const FAREWELL_WAIT_MS = 2000;

/**
 * The bridge's Home Assistant side: MQTT discovery (MQTT_DISCOVERY) and `.../set` commands (MQTT_COMMANDS).
 * The bridge owns the connection and hands it in; with both off every method does nothing.
 */
@injectable()
export class HomeAssistantLink {
  readonly discoveryOn: boolean;
  readonly commands: MqttCommands | undefined;
  private readonly publishPrefix: string;
  private readonly discoveryPrefix: string;
  private readonly status: string;
  private discovery: DiscoveryState | undefined;

  constructor(
    @inject(MQTT_CONFIG) config: MqttConfig,
    @inject(LOGGER) private readonly log: Logger,
    @inject(SetActionValue) setActionValue: SetActionValue,
    @inject(ListGroups) private readonly listGroups: ListGroups,
    @inject(GetRevision) private readonly getRevision: GetRevision,
    @inject(GetLatestReadingsOfGroup) private readonly latestReadings: GetLatestReadingsOfGroup,
    @inject(InstallationValues) private readonly installation: InstallationValues,
    @inject(AuthorizeCredential) authorize: AuthorizeCredential,
  ) {
    const on = homeAssistantSwitches(config);
    this.discoveryOn = on.discovery;
    this.publishPrefix = config.publishPrefix ?? mqttDefaults.publishPrefix;
    this.discoveryPrefix = config.discoveryPrefix ?? mqttDefaults.discoveryPrefix;
    this.status = statusTopic({ publishPrefix: this.publishPrefix });
    const warnings = new WarningGate(log, config.warnIntervalMs ?? mqttDefaults.warnIntervalMs);
    this.commands = on.commands
      ? new MqttCommands(this.publishPrefix, setActionValue, warnings, log, {
          authorize,
          required: config.commandCredentials === 'required',
        })
      : undefined;
  }

  commandStats(): MqttCommandCounts | undefined {
    return this.commands?.stats();
  }

  /** The last will: the broker marks Hortus unavailable when the connection drops without a goodbye. */
  connectOptions(): Pick<IClientOptions, 'will'> {
    if (!this.discoveryOn) return {};
    return {
      will: {
        topic: this.status,
        payload: Buffer.from(NOT_AVAILABLE),
        qos: 1,
        retain: true,
      },
    };
  }

  /** Reads the installation id (for unique ids) once, before the first sync. */
  async prepare(): Promise<void> {
    if (!this.discoveryOn || this.discovery !== undefined) return;
    const names: DiscoveryNames = {
      discoveryPrefix: this.discoveryPrefix,
      publishPrefix: this.publishPrefix,
      installationId: await this.installation.valueOf('id', randomId()),
    };
    this.discovery = new DiscoveryState(names);
  }

  /** The extra subscriptions: commands (shared among the servers, so each is applied once) and the birth. */
  async subscribe(client: MqttClient, sharedGroup: string | false): Promise<void> {
    const filters: string[] = [];
    if (this.commands !== undefined) {
      const filter = this.commands.filter();
      filters.push(sharedGroup === false ? filter : `$share/${sharedGroup}/${filter}`);
    }
    // The status topic too: another server's goodbye or last will must not mark Hortus away while this one runs.
    if (this.discoveryOn) filters.push(`${this.discoveryPrefix}/status`, this.status);
    if (filters.length === 0) return;
    const granted = await client.subscribeAsync(filters, { qos: 1 });
    const refused = granted.find((grant) => grant.qos >= 128);
    if (refused !== undefined) {
      throw new Error(`MQTT broker refused the subscription to ${refused.topic} (code ${refused.qos})`);
    }
  }

  /** Marks Hortus available (retained, so Home Assistant sees it whenever it connects). */
  announce(client: MqttClient): void {
    if (this.discoveryOn) this.send(client, this.status, AVAILABLE);
  }

  /** A goodbye on a clean stop: the last will is only sent when the connection is lost. */
  async farewell(client: MqttClient): Promise<void> {
    if (!this.discoveryOn || !client.connected) return;
    const sent = client
      .publishAsync(this.status, NOT_AVAILABLE, { qos: 1, retain: true })
      .catch((error: unknown) => this.log.warn('mqtt.publish_failed', { error: String(error) }));
    // A connection that died unnoticed never acknowledges: the last will covers that case.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, FAREWELL_WAIT_MS)));
    await Promise.race([sent, bound]).finally(() => clearTimeout(timer));
  }

  /**
   * Takes the messages meant for this side: commands, the status topic and Home Assistant's birth message.
   * Answers false for every other topic (sensor messages for the bridge). `client` is undefined while the
   * bridge stops: nothing is published then.
   */
  receive(client: MqttClient | undefined, topic: string, payload: Buffer, packet: IPublishPacket): boolean {
    const target = this.commands?.target(topic);
    if (target !== undefined) {
      // While stopping (no client) a command is still applied: the broker has handed it over.
      void this.commands?.handle(target, payload, packet.retain, credentialOf(packet));
      return true;
    }
    if (this.discoveryOn && topic === this.status) {
      // Several servers share the topic: the one that stopped or died said offline, this one is still here.
      if (client !== undefined && payload.toString('utf8') === NOT_AVAILABLE) this.announce(client);
      return true;
    }
    if (this.discoveryOn && topic === `${this.discoveryPrefix}/status`) {
      // Home Assistant restarted (or its MQTT integration reloaded): it wants every config again.
      const online = payload.toString('utf8').trim() === 'online';
      if (client !== undefined && online && this.discovery !== undefined) {
        const configs = this.discovery.allConfigs();
        for (const message of configs) this.sendMessage(client, message);
        this.announce(client);
        this.log.info('mqtt.discovery_republished', { configs: configs.length });
      }
      return true;
    }
    return false;
  }

  /** Switch configs of the changed groups' actions; sent right after their state topics. */
  actionsSynced(
    client: MqttClient,
    groups: ReadonlyMap<string, readonly Action[]>,
    everything: boolean,
  ): number {
    const discovery = this.discovery;
    if (discovery === undefined) return 0;
    let sent = 0;
    for (const [group, actions] of groups) {
      for (const message of discovery.actionsOf(group, actions, everything)) {
        this.sendMessage(client, message);
        sent += 1;
      }
    }
    return sent;
  }

  /**
   * Sensor configs and states from each group's latest readings, for the groups whose readings changed
   * since the last sync (one revision read per group when nothing did).
   */
  async readingsSync(client: MqttClient, everything: boolean): Promise<number> {
    const discovery = this.discovery;
    if (discovery === undefined) return 0;
    if (everything) discovery.forgetReadings();
    let sent = 0;
    const groups = await this.listGroups.execute();
    for (const message of discovery.groupsGone(new Set(groups.map(({ name }) => name)))) {
      this.sendMessage(client, message);
      sent += 1;
    }
    for (const { name } of groups) {
      const revision = await this.getRevision.execute({ group: name, subject: 'readings' });
      if (!discovery.readingsChanged(name, revision)) continue;
      const latest = await this.latestReadings.execute({ group: name });
      for (const message of discovery.readingsOf(name, revision, latest, everything)) {
        this.sendMessage(client, message);
        sent += 1;
      }
    }
    return sent;
  }

  private sendMessage(client: MqttClient, { topic, payload }: RetainedMessage): void {
    this.send(client, topic, payload);
  }

  private send(client: MqttClient, topic: string, payload: string): void {
    // mqtt.js keeps QoS 1 messages while offline and sends them after the reconnect.
    client.publishAsync(topic, payload, { qos: 1, retain: true }).catch((error: unknown) => {
      this.log.error('mqtt.publish_failed', {
        topic,
        error: error instanceof Error ? error.message : String(error),
      });
    });
  }
}

function randomId(): string {
  return globalThis.crypto.randomUUID().replace(/-/gu, '').slice(0, 8);
}

/** The credential an MQTT 5 command carries in its user properties (the first, when repeated). */
function credentialOf(packet: IPublishPacket): string | undefined {
  const value = packet.properties?.userProperties?.[COMMAND_CREDENTIAL_PROPERTY];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}
