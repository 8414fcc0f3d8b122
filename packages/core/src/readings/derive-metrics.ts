import { inject, injectable } from 'inversify';
import {
  ENGINE_STATE_REPOSITORY,
  engineStateKey,
  type EngineStateRepository,
} from '../automations/engine-state.port.js';
import { type WakeUps } from '../automations/wake-ups.js';
import { groupTimeZone } from '../groups/group-settings.js';
import { type Group } from '../groups/group.js';
import { InvalidInputError } from '../shared/errors.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import {
  dailyLightIntegral,
  dayStartBefore,
  dewPoint,
  LIGHT_GAP_MS,
  leafVpd,
  LightIntegral,
  pairAirReadings,
  ppfdFromLux,
  type Sample,
} from './derived-math.js';
import {
  anyMetricOn,
  dayStartOf,
  lightFactorOf,
  type MetricsSettings,
  readMetricsSettings,
} from './metrics-settings.js';
import { type NewReading, sensorTopics } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';
import { derivedTopics } from './topics.js';

/** Readings are paired and integrated in windows of this length, aligned to the epoch. */
export const DERIVE_WINDOW_MS = 60_000;
/**
 * A window is derived once it ended this long ago: readings a box sends a little late, or in any order
 * within it, still count. A reading later than that is derived by `group metrics --backfill`.
 */
export const DERIVE_CLOSE_AFTER_MS = 2 * 60_000;
/** The engine catches up at most this much after a stop; older windows are the backfill's. */
export const DERIVE_CATCH_UP_MS = 24 * 3_600_000;
const DAY_MS = 86_400_000;
const PAGE = 5000;

export interface BackfillProgress {
  /** Milliseconds of the past derived so far, of `totalMs`. */
  readonly doneMs: number;
  readonly totalMs: number;
  /** Derived readings newly stored so far. */
  readonly stored: number;
}

export interface BackfillResult {
  readonly from: Date | undefined;
  readonly to: Date;
  readonly stored: number;
}

/**
 * Derives the group's derived series (docs/metrics.md) from its readings, window by closed window. The
 * engine calls deriveGroup each time it looks at a group: the windows closed since the last derivation are
 * claimed by a compare-and-set of the group's cursor in the engine state, as a time slot is claimed, so
 * however many servers run an engine each window is derived by one of them, once. A window's values
 * depend only on the readings stored in it (and, for the DLI, on the light readings of its day), so the
 * same readings give the same series on every store, and a repeated derivation (backfill) stores nothing
 * twice: the store skips a reading whose stamp it holds.
 */
@injectable()
export class DeriveMetrics {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CORE_SETTINGS) private readonly coreSettings: CoreSettings,
  ) {}

  /** Derives the windows closed since the last claim, when this engine wins it; answers how many values went in. */
  async deriveGroup(group: Group, now: Date, wake?: WakeUps): Promise<number> {
    const settings = readMetricsSettings(group.settings);
    if (!anyMetricOn(settings)) return 0;
    const closedEnd = lastClosedEnd(now.getTime());
    wake?.at(closedEnd + DERIVE_WINDOW_MS + DERIVE_CLOSE_AFTER_MS);
    const key = cursorKey(group.name);
    const stored = await this.state.get(key);
    const through = stored?.value['through'];
    const start = typeof through === 'number' ? through : closedEnd - DERIVE_WINDOW_MS;
    const from = Math.max(start, closedEnd - DERIVE_CATCH_UP_MS);
    if (from >= closedEnd) return 0;
    if (!(await this.state.compareAndSet(key, stored?.version ?? 0, { through: closedEnd }, now))) return 0;
    return this.deriveRange(group, settings, from, closedEnd);
  }

  /**
   * Derives the group's past (`hortus group metrics <g> --backfill`) from its oldest reading up to where the
   * engine has derived (or the last closed window), a day at a time, telling `onProgress` after each day.
   */
  async backfill(
    group: Group,
    now: Date,
    onProgress?: (progress: BackfillProgress) => void,
  ): Promise<BackfillResult> {
    const settings = readMetricsSettings(group.settings);
    if (!anyMetricOn(settings))
      throw new InvalidInputError(`no derived series is on for group ${group.name}: turn one on first`);
    const key = cursorKey(group.name);
    const stored = await this.state.get(key);
    const through = stored?.value['through'];
    const closedEnd = lastClosedEnd(now.getTime());
    const to = typeof through === 'number' ? Math.min(through, closedEnd) : closedEnd;
    const from = await this.oldestSource(group.name, settings);
    let total = 0;
    if (from !== undefined && from < to) {
      const first = Math.floor(from / DERIVE_WINDOW_MS) * DERIVE_WINDOW_MS;
      for (let start = first; start < to; start += DAY_MS) {
        const end = Math.min(to, start + DAY_MS);
        total += await this.deriveRange(group, settings, start, end);
        onProgress?.({ doneMs: end - first, totalMs: to - first, stored: total });
      }
    }
    // The engine goes on from here; one that claimed meanwhile has its own cursor already.
    if (stored === undefined) await this.state.compareAndSet(key, 0, { through: to }, now);
    return { from: from === undefined ? undefined : new Date(from), to: new Date(to), stored: total };
  }

  /** Derives the windows of [from, to) (both on window bounds) and stores the values. */
  private async deriveRange(
    group: Group,
    settings: MetricsSettings,
    from: number,
    to: number,
  ): Promise<number> {
    const values: NewReading[] = [];
    const add = (topic: string, time: number, value: number, decimals: number) => {
      values.push({ group: group.name, topic, time: new Date(time), value: round(value, decimals) });
    };
    if (settings.vpd || settings.dewPoint) {
      const temperatures = byWindow(await this.samples(group.name, sensorTopics.temperature, from, to));
      const humidities = byWindow(await this.samples(group.name, sensorTopics.humidity, from, to));
      for (const [window, air] of temperatures) {
        for (const pair of pairAirReadings(air, humidities.get(window) ?? [])) {
          if (settings.vpd)
            add(derivedTopics.vpd, pair.time, leafVpd(pair.celsius, pair.humidity, settings.leafOffset), 3);
          const dew = settings.dewPoint ? dewPoint(pair.celsius, pair.humidity) : undefined;
          if (dew !== undefined) add(derivedTopics.dewPoint, pair.time, dew, 2);
        }
      }
    }
    if (settings.dli) {
      const timeZone = groupTimeZone(group.settings, this.coreSettings.timeZone);
      const dayStart = dayStartOf(settings);
      const factor = lightFactorOf(settings);
      // The day of the range's first window, and the readings just before it that bridge into it.
      const since = dayStartBefore(from, dayStart, timeZone) - LIGHT_GAP_MS;
      const lux = await this.samples(group.name, sensorTopics.lux, since, to);
      const ppfd = lux.map(({ time, value }) => ({ time, value: ppfdFromLux(value, factor) }));
      const light = new LightIntegral(ppfd);
      const lastOfWindow = new Map<number, number>();
      for (const sample of ppfd) {
        if (sample.time < from) continue;
        add(derivedTopics.ppfd, sample.time, sample.value, 2);
        lastOfWindow.set(windowOf(sample.time), sample.time);
      }
      for (const time of lastOfWindow.values())
        add(derivedTopics.dli, time, dailyLightIntegral(light, time, dayStart, timeZone), 3);
    }
    let stored = 0;
    for (let i = 0; i < values.length; i += PAGE)
      stored += await this.readings.add(values.slice(i, i + PAGE));
    return stored;
  }

  /** The readings of one series in [from, to), oldest first, page by page. */
  private async samples(group: string, topic: string, from: number, to: number): Promise<Sample[]> {
    const samples: Sample[] = [];
    const selection = { group, topic, from: new Date(from), to: new Date(to - 1) };
    let after: { topic: string; time: Date } | undefined;
    for (;;) {
      const page = await this.readings.page(selection, after, PAGE);
      for (const reading of page) samples.push({ time: reading.time.getTime(), value: reading.value });
      const last = page.at(-1);
      if (last === undefined || page.length < PAGE) return samples;
      after = { topic: last.topic, time: last.time };
    }
  }

  private async oldestSource(group: string, settings: MetricsSettings): Promise<number | undefined> {
    const topics = [
      ...(settings.vpd || settings.dewPoint ? [sensorTopics.temperature, sensorTopics.humidity] : []),
      ...(settings.dli ? [sensorTopics.lux] : []),
    ];
    let oldest: number | undefined;
    for (const topic of topics) {
      const time = (await this.readings.oldest({ group, topic }))?.time.getTime();
      if (time !== undefined && (oldest === undefined || time < oldest)) oldest = time;
    }
    return oldest;
  }
}

/** Where a group's derivation has got to: the end of the last claimed window. */
export function derivedCursorKey(group: string): string {
  return cursorKey(group);
}

function cursorKey(group: string): string {
  return engineStateKey('derived', group);
}

function lastClosedEnd(now: number): number {
  return Math.floor((now - DERIVE_CLOSE_AFTER_MS) / DERIVE_WINDOW_MS) * DERIVE_WINDOW_MS;
}

function windowOf(time: number): number {
  return Math.floor(time / DERIVE_WINDOW_MS);
}

function byWindow(samples: readonly Sample[]): Map<number, Sample[]> {
  const windows = new Map<number, Sample[]>();
  for (const sample of samples) {
    const window = windowOf(sample.time);
    const list = windows.get(window);
    if (list === undefined) windows.set(window, [sample]);
    else list.push(sample);
  }
  return windows;
}

function round(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
