import { inject, injectable } from 'inversify';
import { AUTOMATION_SETTINGS, type AutomationSettings } from '../automations/automation-settings.js';
import {
  ENGINE_STATE_REPOSITORY,
  engineStateKey,
  type EngineStateRepository,
} from '../automations/engine-state.port.js';
import { readNumberSetting } from '../groups/group-settings.js';
import { type Group } from '../groups/group.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { type Notification } from '../notifications/notification.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { type Reading, sensorTopics } from '../readings/reading.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';

/** Which settings bound which topics: the keys clients write into a group's settings. */
const watchedRanges = [
  { label: 'Temperature', topics: [sensorTopics.temperature], min: 'tempMin', max: 'tempMax' },
  {
    label: 'Soil moisture',
    topics: [sensorTopics.moisture1, sensorTopics.moisture2, sensorTopics.moisture3],
    min: 'moistureMin',
    max: 'moistureMax',
  },
] as const;

type AlertKind = 'low' | 'high' | 'no-data';

const key = (...parts: readonly string[]): string => engineStateKey('alert', ...parts);

/**
 * Raises a notification when a group's newest reading of a watched topic leaves the range its settings
 * give, and one when it returns; at most one alert per group, topic and kind is open at a time. Also
 * raises "no data received" when a group that used to report has gone quiet.
 */
@injectable()
export class EvaluateAlerts {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(AUTOMATION_SETTINGS) private readonly settings: AutomationSettings,
  ) {}

  async execute(): Promise<Notification[]> {
    const now = this.clock.now();
    const raised: Notification[] = [];
    for (const group of await this.groups.list()) {
      const latest = await this.readings.latestOfEveryTopic(group.name);
      if (latest.length === 0) continue;
      raised.push(...(await this.checkSilence(group, latest, now)));
      for (const reading of latest) {
        if (now.getTime() - reading.time.getTime() > this.settings.maxReadingAgeMs) continue;
        raised.push(...(await this.checkRange(group, reading, now)));
      }
    }
    return raised;
  }

  private async checkRange(group: Group, reading: Reading, now: Date): Promise<Notification[]> {
    const range = watchedRanges.find((candidate) =>
      (candidate.topics as readonly string[]).includes(reading.topic),
    );
    if (range === undefined) return [];
    const min = readNumberSetting(group.settings, range.min);
    const max = readNumberSetting(group.settings, range.max);
    const { deadBand } = this.settings;
    const raised: Notification[] = [];
    for (const [kind, bound] of [
      ['low', min],
      ['high', max],
    ] as const) {
      if (bound === undefined) continue;
      const outside = kind === 'low' ? reading.value < bound : reading.value > bound;
      const backInside =
        kind === 'low' ? reading.value >= bound + deadBand : reading.value <= bound - deadBand;
      const words = kind === 'low' ? `below its minimum of ${bound}` : `above its maximum of ${bound}`;
      const message = outside
        ? `${range.label} (${reading.topic}) is ${words}: ${reading.value}`
        : `${range.label} (${reading.topic}) is back in range: ${reading.value}`;
      const notification = await this.transition(group.name, reading.topic, kind, outside, backInside, now, {
        message,
        topic: reading.topic,
        value: reading.value,
      });
      if (notification !== undefined) raised.push(notification);
    }
    return raised;
  }

  private async checkSilence(group: Group, latest: readonly Reading[], now: Date): Promise<Notification[]> {
    const newest = Math.max(...latest.map((reading) => reading.time.getTime()));
    const silentMs = now.getTime() - newest;
    const minutes = Math.round(this.settings.noDataAlertMs / 60_000);
    const silent = silentMs > this.settings.noDataAlertMs;
    const notification = await this.transition(group.name, '*', 'no-data', silent, !silent, now, {
      message: silent
        ? `No data received from group ${group.name} for ${minutes} minutes`
        : `Data from group ${group.name} is arriving again`,
    });
    return notification === undefined ? [] : [notification];
  }

  /** Opens or closes one alert; the compare-and-set makes sure only one engine writes each notification. */
  private async transition(
    group: string,
    topic: string,
    kind: AlertKind,
    open: boolean,
    close: boolean,
    now: Date,
    notification: { message: string; topic?: string; value?: number },
  ): Promise<Notification | undefined> {
    const alertKey = key(group, topic, kind);
    const stored = await this.state.get(alertKey);
    const isOpen = stored?.value['open'] === true;
    if (open === isOpen || (!open && !close)) return undefined;
    if (!(await this.state.compareAndSet(alertKey, stored?.version ?? 0, { open }, now))) return undefined;
    return this.notifications.create({ group, time: now, ...notification });
  }
}
