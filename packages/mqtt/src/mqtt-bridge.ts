import { inject, injectable } from 'inversify';
import { connect, type IPublishPacket, type MqttClient } from 'mqtt';
import {
  type Action,
  ActionChanges,
  FindDevice,
  InstallationValues,
  isPlainObject,
  ListChangedActions,
  LOGGER,
  type Logger,
  MAX_READINGS_PER_BATCH,
  RecordReadings,
  redactUrl,
} from '@hortus/core';
import { HomeAssistantLink } from './home-assistant-link.js';
import { type MqttCommandCounts } from './mqtt-commands.js';
import { type MqttIdentity, mqttIdentityOf } from './mqtt-identity.js';
import { readingItemsFromMqtt } from './mqtt-payload.js';
import { ownerLevelIndex, TopicOwners } from './topic-owners.js';
import { WarningGate } from './warning-gate.js';
import { isPlainTopic, MQTT_CONFIG, type MqttConfig, mqttDefaults } from './mqtt-config.js';

export interface MqttBridgeStats {
  /** Messages delivered by the broker on the topic filter. */
  readonly received: number;
  /** Readings RecordReadings accepted. */
  readonly accepted: number;
  /** Readings RecordReadings rejected (bad group, value, time...). */
  readonly rejected: number;
  /** Messages in neither the legacy text nor a JSON format. */
  readonly malformed: number;
  /** Messages over maxPayloadBytes, dropped unread. */
  readonly oversized: number;
  /** Action changes the broker acknowledged. */
  readonly published: number;
  /** Readings lost because the store failed or the queue was full. */
  readonly failed: number;
  /**
   * Readings on a topic owned by a registered box whose payload named another group: stored under the
   * box's group instead.
   */
  readonly regrouped: number;
  /** `.../set` commands by result; absent when commands are off. */
  readonly commands?: MqttCommandCounts;
}

interface QueuedReading {
  readonly topic: string;
  readonly item: unknown;
}

/** Readings gathered before one RecordReadings call: many small writes would make ingest slow. */
export const FLUSH_AFTER_MS = 100;
export const FLUSH_AT_READINGS = 500;
/** Bounds memory while the store is slower than the boxes; beyond it readings are dropped and counted. */
export const MAX_QUEUED_READINGS = 50_000;
const STOP_PUBLISH_WAIT_MS = 2000;
const PAYLOAD_EXCERPT_CHARS = 120;

/**
 * Bridges the broker and the core: sensor messages become readings (batched), and every action value
 * change becomes a retained message, so boxes subscribe instead of polling.
 */
@injectable()
export class MqttBridge {
  private readonly filter: string;
  /** What is sent to the broker: the filter, or `$share/<group>/<filter>` with a shared group. */
  /** What start() chose: the configured names, or the installation's own. */
  private identity: MqttIdentity | undefined;
  private starting = false;
  private readonly prefix: string;
  private readonly maxPayloadBytes: number;
  private client: MqttClient | undefined;
  private unsubscribeChanges: (() => void) | undefined;
  private queue: QueuedReading[] = [];
  private queued = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private recording: Promise<void> = Promise.resolve();
  private readonly pendingPublishes = new Set<Promise<void>>();
  private lastError: string | undefined;
  private reconnectAttempts = 0;
  private counts = {
    received: 0,
    accepted: 0,
    rejected: 0,
    malformed: 0,
    oversized: 0,
    published: 0,
    failed: 0,
    regrouped: 0,
  };
  private readonly owners: TopicOwners;
  /** Warnings a box can cause with every message it sends are shown once per interval. */
  private readonly warnings: WarningGate;
  /** Action revisions per group as of the last state sync; emptied on every (re)connect. */
  private seenRevisions: ReadonlyMap<string, string> = new Map();
  /** What this bridge last published per group and object: repeats are skipped, vanished actions cleared. */
  private readonly publishedValues = new Map<string, Map<string, string>>();
  private republishAll = true;
  private syncing: Promise<void> = Promise.resolve();
  private syncQueued = false;
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(
    @inject(RecordReadings) private readonly recordReadings: RecordReadings,
    @inject(ActionChanges) private readonly actionChanges: ActionChanges,
    @inject(ListChangedActions) private readonly listChangedActions: ListChangedActions,
    @inject(MQTT_CONFIG) private readonly config: MqttConfig,
    @inject(LOGGER) private readonly log: Logger,
    @inject(FindDevice) findDevice: FindDevice,
    @inject(InstallationValues) private readonly installation: InstallationValues,
    @inject(HomeAssistantLink) private readonly homeAssistant: HomeAssistantLink,
  ) {
    this.filter = config.topicFilter ?? mqttDefaults.topicFilter;
    this.prefix = config.publishPrefix ?? mqttDefaults.publishPrefix;
    this.maxPayloadBytes = config.maxPayloadBytes ?? mqttDefaults.maxPayloadBytes;
    this.owners = new TopicOwners(findDevice, ownerLevelIndex(this.filter));
    this.warnings = new WarningGate(log, config.warnIntervalMs ?? mqttDefaults.warnIntervalMs);
  }

  stats(): MqttBridgeStats {
    const commands = this.homeAssistant.commandStats();
    return { ...this.counts, ...(commands === undefined ? {} : { commands }) };
  }

  /** True while started and connected to the broker; false while it is away (mqtt.js reconnects) or stopped. */
  get connected(): boolean {
    return this.client?.connected === true;
  }

  /**
   * Connects, subscribes and starts publishing action changes. Rejects (and leaves nothing running)
   * when the broker cannot be reached or refuses the subscription within startTimeoutMs.
   */
  async start(): Promise<void> {
    if (this.client !== undefined || this.starting) throw new Error('MqttBridge is already started');
    this.starting = true;
    try {
      await this.connectAndSubscribe();
    } finally {
      this.starting = false;
    }
  }

  /** The client id and shared group of this process (see MqttIdentity); reads the store once. */
  async mqttIdentity(): Promise<MqttIdentity> {
    this.identity ??= await mqttIdentityOf(this.config, this.installation, this.filter);
    return this.identity;
  }

  private async connectAndSubscribe(): Promise<void> {
    const url = redactUrl(this.config.url);
    let identity: MqttIdentity;
    try {
      identity = await this.mqttIdentity();
      await this.homeAssistant.prepare();
    } catch (error) {
      this.log.error('mqtt.start_failed', { url, error: messageOf(error) });
      throw error;
    }
    const { clientId, sharedGroup } = identity;
    const timeoutMs = this.config.startTimeoutMs ?? mqttDefaults.startTimeoutMs;
    const client = connect(this.config.url, {
      reconnectPeriod: this.config.reconnectPeriodMs ?? mqttDefaults.reconnectPeriodMs,
      connectTimeout: Math.min(timeoutMs, 30_000),
      // A clean session plus mqtt.js's resubscribe restores the subscription after every reconnect.
      clean: true,
      resubscribe: true,
      // Shared subscriptions are standard from MQTT 5 on; without them MQTT 3.1.1 reaches older brokers.
      protocolVersion: sharedGroup === false ? 4 : 5,
      clientId,
      ...this.homeAssistant.connectOptions(),
      ...(this.config.username === undefined ? {} : { username: this.config.username }),
      ...(this.config.password === undefined ? {} : { password: this.config.password }),
    });
    this.client = client;
    this.watch(client, url);
    try {
      await withDeadline(this.subscribe(client, identity), timeoutMs, () => {
        const cause = this.lastError === undefined ? '' : ` (last error: ${this.lastError})`;
        return new Error(`MQTT broker ${url} not reachable within ${timeoutMs} ms${cause}`);
      });
    } catch (error) {
      this.client = undefined;
      await client.endAsync(true);
      this.log.error('mqtt.start_failed', { url, error: messageOf(error) });
      throw error;
    }
    this.unsubscribeChanges = this.actionChanges.subscribe((action) => this.publishChange(action));
    // In-process changes are pushed at once (above); changes by other processes on the store (the CLI,
    // another server) only show in the store's revision counters, so they are polled. The store offers no
    // change feed common to SQLite, MongoDB and memory (change streams need a replica set), and one cheap
    // read of the counters every few seconds is well below what one polling browser costs.
    this.pollTimer = setInterval(
      () => this.syncStates(),
      this.config.statePollMs ?? mqttDefaults.statePollMs,
    );
    this.pollTimer.unref();
    this.syncStates();
    this.log.info('mqtt.started', {
      url,
      topicFilter: this.filter,
      clientId,
      sharedGroup,
      publishPrefix: this.prefix,
      discovery: this.homeAssistant.discoveryOn,
      commands: this.homeAssistant.commands !== undefined,
    });
  }

  /** Stops publishing, closes the connection (after in-flight publishes, briefly) and stores what is queued. */
  async stop(): Promise<void> {
    const client = this.client;
    if (client === undefined) return;
    this.client = undefined;
    this.unsubscribeChanges?.();
    this.unsubscribeChanges = undefined;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await this.syncing;
    await this.homeAssistant.commands?.idle();
    await this.homeAssistant.farewell(client);
    await Promise.race([Promise.allSettled([...this.pendingPublishes]), delay(STOP_PUBLISH_WAIT_MS)]);
    await client.endAsync(!client.connected || this.pendingPublishes.size > 0);
    await this.flush();
    this.log.info('mqtt.stopped', { ...this.counts });
  }

  private async subscribe(client: MqttClient, { subscription, sharedGroup }: MqttIdentity): Promise<void> {
    if (!client.connected) {
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    }
    const granted = await client.subscribeAsync(subscription, { qos: 1 });
    // MQTT 3.1.1 refuses with 128; MQTT 5 with a reason code from 128 on (158: no shared subscriptions).
    const refused = granted.find((grant) => grant.qos >= 128);
    if (refused !== undefined) {
      const hint =
        sharedGroup === false ? '' : ' (set MQTT_SHARED_GROUP=off if the broker has no shared subscriptions)';
      throw new Error(`MQTT broker refused the subscription to ${subscription} (code ${refused.qos})${hint}`);
    }
    await this.homeAssistant.subscribe(client, sharedGroup);
  }

  private watch(client: MqttClient, url: string): void {
    client.on('message', (topic, payload, packet) => this.receive(topic, payload, packet));
    client.on('connect', () => {
      this.log.info('mqtt.connected', { url, reconnectAttempts: this.reconnectAttempts });
      this.lastError = undefined;
      this.reconnectAttempts = 0;
      this.homeAssistant.announce(client);
      // The broker may have lost its retained messages (a restart without persistence): send every value.
      this.republishAll = true;
      this.seenRevisions = new Map();
      // The first connect is synced by start() once it has succeeded.
      if (this.pollTimer !== undefined) this.syncStates();
    });
    client.on('offline', () => this.log.warn('mqtt.offline', { url }));
    // One line per outage, not one per attempt: 'mqtt.connected' tells how many it took.
    client.on('reconnect', () => {
      this.reconnectAttempts += 1;
      if (this.reconnectAttempts === 1) this.log.info('mqtt.reconnecting', { url });
    });
    // Without a listener an 'error' event would crash the process; repeats of one error are logged once.
    client.on('error', (error) => {
      if (error.message === this.lastError) return;
      this.lastError = error.message;
      this.log.warn('mqtt.error', { url, error: error.message });
    });
  }

  private receive(topic: string, payload: Buffer, packet: IPublishPacket): void {
    if (this.homeAssistant.receive(this.client, topic, payload, packet)) return;
    this.counts.received += 1;
    // Retained sensor values are old samples: legacy ones carry no time and would be stored as new.
    if (packet.retain) {
      this.log.info('mqtt.retained_skipped', { topic });
      return;
    }
    if (payload.length > this.maxPayloadBytes) {
      this.counts.oversized += 1;
      this.warnings.warn('mqtt.message_oversized', {
        topic,
        bytes: payload.length,
        limit: this.maxPayloadBytes,
      });
      return;
    }
    let items: unknown[] | undefined;
    let reason = 'neither `<value>,<group>` nor JSON';
    try {
      items = readingItemsFromMqtt(topic, payload.toString('utf8'));
    } catch (error) {
      reason = messageOf(error);
    }
    if (items === undefined || items.length === 0) {
      this.counts.malformed += 1;
      this.warnings.warn('mqtt.message_malformed', {
        topic,
        reason: items === undefined ? reason : 'no readings in the message',
        payload: payload.toString('utf8', 0, PAYLOAD_EXCERPT_CHARS),
      });
      return;
    }
    if (this.queued + items.length > MAX_QUEUED_READINGS) {
      this.counts.failed += items.length;
      this.warnings.warn('mqtt.queue_full', { topic, dropped: items.length }, 'error');
      return;
    }
    for (const item of items) this.queue.push({ topic, item });
    this.queued += items.length;
    if (this.queue.length >= FLUSH_AT_READINGS) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /** Hands the queue to RecordReadings; batches are recorded one after another, never concurrently. */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0) this.recording = this.recording.then(() => this.record(batch));
    return this.recording;
  }

  private async record(batch: readonly QueuedReading[]): Promise<void> {
    for (let start = 0; start < batch.length; start += MAX_READINGS_PER_BATCH) {
      const chunk = batch.slice(start, start + MAX_READINGS_PER_BATCH);
      try {
        const result = await this.recordReadings.execute(await this.bindToOwners(chunk));
        this.counts.accepted += result.accepted;
        this.counts.rejected += result.rejected.length;
        if (result.rejected.length > 0) {
          this.warnings.warn('mqtt.readings_rejected', {
            rejected: result.rejected.length,
            examples: result.rejected
              .slice(0, 5)
              .map(({ index, reason }) => ({ topic: chunk[index]?.topic, reason })),
          });
        }
      } catch (error) {
        this.counts.failed += chunk.length;
        this.log.error('mqtt.ingest_failed', {
          readings: chunk.length,
          error: messageOf(error),
        });
      } finally {
        this.queued -= chunk.length;
      }
    }
  }

  /**
   * A topic under a registered box's own level can only come from that box (the broker's ACL), so its
   * readings belong to the box's group whatever the payload names: a box must not feed another group's
   * data and rules. They are stored under the box's group, as readings a box posts over HTTP are, so a
   * box moved to another group keeps reporting without being reflashed. Other topics keep the payload's group.
   */
  private async bindToOwners(chunk: readonly QueuedReading[]): Promise<unknown[]> {
    const owners = await this.owners.groupsOf(chunk.map((queued) => queued.topic));
    return chunk.map(({ topic, item }) => {
      const group = owners.get(topic);
      if (group === undefined || !isPlainObject(item) || item['group'] === group) return item;
      if (item['group'] !== undefined) {
        this.counts.regrouped += 1;
        this.warnings.warn('mqtt.group_overridden', {
          topic,
          named: String(item['group']).slice(0, PAYLOAD_EXCERPT_CHARS),
          group,
        });
      }
      return { ...item, group };
    });
  }

  private publishChange(action: Action): void {
    this.publish(action.group, action.object, action.value);
  }

  /**
   * Publishes the values of the actions whose group changed since the last sync, and every value after a
   * (re)connect. Runs are queued one after another: a run asked for while one is busy runs once after it.
   */
  private syncStates(): void {
    if (this.syncQueued) return;
    this.syncQueued = true;
    this.syncing = this.syncing.then(async () => {
      this.syncQueued = false;
      if (this.client === undefined) return;
      const everything = this.republishAll;
      try {
        const { revisions, groups } = await this.listChangedActions.execute(
          everything ? new Map() : this.seenRevisions,
        );
        let sent = 0;
        for (const [group, actions] of groups) sent += this.publishGroup(group, actions, everything);
        const client = this.client;
        let discovery = 0;
        if (client !== undefined) {
          discovery += this.homeAssistant.actionsSynced(client, groups, everything);
          discovery += await this.homeAssistant.readingsSync(client, everything);
        }
        this.seenRevisions = revisions;
        if (everything) this.republishAll = false;
        if (sent > 0) this.log.info('mqtt.states_published', { actions: sent, everything });
        if (discovery > 0) this.log.info('mqtt.discovery_published', { messages: discovery, everything });
      } catch (error) {
        // The store is away: the next poll tries again, with the same revisions and the same `everything`.
        this.log.warn('mqtt.state_sync_failed', { error: messageOf(error) });
      }
    });
  }

  /** Answers how many messages it sent: changed values, and an empty retained message for each vanished action. */
  private publishGroup(group: string, actions: readonly Action[], everything: boolean): number {
    const before = this.publishedValues.get(group) ?? new Map<string, string>();
    let sent = 0;
    for (const action of actions) {
      if (everything || before.get(action.object) !== action.value) {
        if (this.publish(group, action.object, action.value)) sent += 1;
      }
    }
    const current = new Set(actions.map((action) => action.object));
    for (const object of [...before.keys()]) {
      // An empty retained message removes the retained one: boxes stop seeing a deleted action.
      if (!current.has(object) && this.publish(group, object, undefined)) sent += 1;
    }
    return sent;
  }

  /** Publishes retained (`undefined` clears the topic) and notes it; false when skipped. */
  private publish(group: string, object: string, value: string | undefined): boolean {
    const client = this.client;
    if (client === undefined) return false;
    // A `/` or wildcard in a name would publish to some other topic than the one boxes subscribe to.
    if (![group, object].every((segment) => isPlainTopic(segment) && !segment.includes('/'))) {
      this.log.warn('mqtt.publish_skipped', { group, object });
      return false;
    }
    let values = this.publishedValues.get(group);
    if (values === undefined) this.publishedValues.set(group, (values = new Map()));
    if (value === undefined) values.delete(object);
    else values.set(object, value);
    const topic = `${this.prefix}/${group}/actions/${object}`;
    // mqtt.js keeps QoS 1 messages while offline and sends them after the reconnect.
    const publish = client.publishAsync(topic, value ?? '', { qos: 1, retain: true }).then(
      () => {
        this.counts.published += 1;
      },
      (error: unknown) => {
        this.log.error('mqtt.publish_failed', { topic, error: messageOf(error) });
      },
    );
    this.pendingPublishes.add(publish);
    void publish.finally(() => this.pendingPublishes.delete(publish));
    return true;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function withDeadline<T>(work: Promise<T>, ms: number, timeoutError: () => unknown): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    // Unref'd: a start that was cut short must not keep the process alive until the deadline.
    timer = setTimeout(() => reject(timeoutError()), ms).unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
