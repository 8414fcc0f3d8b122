import { DeriveMetrics } from '../readings/derive-metrics.js';
import { defaultMetricsSettings, METRICS_KEY } from '../readings/metrics-settings.js';
import { inject, injectable } from 'inversify';
import { type AutomationSet } from '../actions/action.js';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from '../devices/device.port.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { newChart } from '../history-charts/history-chart.js';
import {
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
} from '../history-charts/history-chart.port.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { type NewReading, sensorTopics } from '../readings/reading.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ConflictError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';

export const DEMO_GROUP = 'demo';
/** A fixed id in the 24-hex form clients hold, so the demo chart is easy to find. */
export const DEMO_USER_ID = '000000000000000000000001';
const demoObjects = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'] as const;
const READING_STEP_MS = 5 * 60_000;
const DAY_MS = 24 * 3_600_000;

/** Plausible day curves per topic: base, daily swing, phase (hours). */
const demoSeries: Record<string, readonly [number, number, number]> = {
  [sensorTopics.temperature]: [22, 4, 14],
  [sensorTopics.humidity]: [60, 12, 4],
  [sensorTopics.lux]: [9000, 9000, 13],
  [sensorTopics.moisture1]: [45, 5, 8],
  [sensorTopics.moisture2]: [52, 4, 9],
  [sensorTopics.moisture3]: [38, 6, 10],
  'esp/air/pressure': [1013, 3, 0],
};

/** A few rules so the engine has something to do in the demo: lights on a timer, a fan on temperature. */
const demoAutomations: Record<(typeof demoObjects)[number], AutomationSet[]> = {
  pump_1: [
    { timeAutomations: [{ action: 'on', time: '07:00', frequency: 'every day' }], sensorAutomations: [] },
  ],
  led_1: [
    {
      timeAutomations: [
        { action: 'on', time: '06:00', frequency: 'every day' },
        { action: 'off', time: '20:00', frequency: 'every day' },
      ],
      sensorAutomations: [],
    },
  ],
  ventilator_1: [
    {
      timeAutomations: [],
      sensorAutomations: [
        { action: 'on', sensor: 'temperature', condition: 'above', value: '28' },
        { action: 'off', sensor: 'temperature', condition: 'less than', value: '24' },
      ],
    },
  ],
  ventilator_2: [{ timeAutomations: [], sensorAutomations: [] }],
};

export interface DemoSummary {
  readonly group: string;
  readonly readings: number;
  readonly created: readonly string[];
}

/**
 * Fills a store with a small working greenhouse so a new user sees data at once. Seeds once: when the
 * group exists already (a restart on a persistent store), nothing is added, not even a newer day of
 * readings; a run cut short is completed without duplicating what it had made.
 */
@injectable()
export class SeedDemo {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
    @inject(HISTORY_CHART_REPOSITORY) private readonly charts: HistoryChartRepository,
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(DeriveMetrics) private readonly derive: DeriveMetrics,
  ) {}

  async execute(input: { group?: unknown } = {}): Promise<DemoSummary> {
    const group = input.group === undefined ? DEMO_GROUP : requireText(input.group, 'group');
    if ((await this.groups.findByName(group)) !== undefined) return { group, readings: 0, created: [] };
    const now = this.clock.now();
    const created: string[] = [];
    const attempt = async (label: string, create: () => Promise<unknown>): Promise<void> => {
      try {
        await create();
        created.push(label);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    };

    await attempt(`group ${group}`, () =>
      this.groups.create({
        name: group,
        package: 'small',
        employee: ['demo'],
        settings: [
          { tempMin: 15 },
          { tempMax: 30 },
          { moistureMin: 30 },
          { moistureMax: 70 },
          // Every derived series on (docs/metrics.md), its past derived below.
          {
            [METRICS_KEY]: {
              ...defaultMetricsSettings,
              vpd: true,
              dewPoint: true,
              dli: true,
              light: 'white-led',
            },
          },
        ],
      }),
    );
    for (const object of demoObjects) {
      await attempt(`action ${object}`, () =>
        this.actions.create({
          group,
          object,
          value: 'off',
          automations: demoAutomations[object],
        }),
      );
    }
    const suffix = [...group].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) % 256, 7);
    for (const [index, type] of ['sensor-box', 'relay-box'].entries()) {
      const deviceId = `24:6F:28:${suffix.toString(16).padStart(2, '0').toUpperCase()}:00:0${index + 1}`;
      await attempt(`device ${deviceId}`, () => this.devices.create({ deviceId, group, type }));
    }
    await attempt('user demo', () =>
      this.users.create(
        { firstName: 'Demo', lastName: 'Grower', email: `demo@${group}.hortus.local`, group },
        { provenance: { origin: 'cli', createdAt: now } },
      ),
    );

    const batch: NewReading[] = [];
    const end = Math.floor(now.getTime() / READING_STEP_MS) * READING_STEP_MS;
    for (let time = end - DAY_MS + READING_STEP_MS; time <= end; time += READING_STEP_MS) {
      const hourOfDay = (time % DAY_MS) / 3_600_000;
      for (const [topic, [base, swing, phase]] of Object.entries(demoSeries)) {
        const value = base + swing * Math.cos(((hourOfDay - phase) / 24) * 2 * Math.PI);
        batch.push({ group, topic, value: Math.max(0, Math.round(value * 100) / 100), time: new Date(time) });
      }
    }
    const stored = await this.readings.add(batch);
    const seeded = await this.groups.findByName(group);
    if (seeded !== undefined) await this.derive.backfill(seeded, now);

    if (created.includes(`group ${group}`)) {
      await this.notifications.create({
        group,
        time: now,
        message: 'Demo: soil moisture of sensor 3 is below its minimum',
        topic: sensorTopics.moisture3,
        value: 29.5,
      });
      await this.charts.appendChart(
        DEMO_USER_ID,
        newChart(
          {
            chartId: 'demo-chart',
            chartName: 'Greenhouse',
            chartData: {
              type: 'line',
              max_count: 288,
              data_interval: 300000,
              datasets: [{ checked_temperature: true, checked_humidity: true, checked_lux: false }],
            },
          },
          now,
        ),
      );
      created.push('notification', 'chart Greenhouse');
    }
    return { group, readings: stored, created };
  }
}
