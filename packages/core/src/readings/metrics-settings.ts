import { groupSettingKeys } from '../groups/group-setting-keys.js';
import { readSetting, withSetting } from '../groups/group-settings.js';
import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject } from '../shared/validation.js';
import { type DayStart, lightPresets, type LightPreset } from './derived-math.js';

export const METRICS_KEY = groupSettingKeys.metrics;

/** Which derived series a group has on and how they are derived (the `metrics` group setting). */
export interface MetricsSettings {
  readonly vpd: boolean;
  readonly dewPoint: boolean;
  /** PPFD and DLI, both from the lux sensor. */
  readonly dli: boolean;
  /** Leaf temperature minus air temperature in °C (leaf VPD); 0 gives the air's VPD. */
  readonly leafOffset: number;
  /** A preset name or µmol m⁻² s⁻¹ per lux. */
  readonly light: LightPreset | number;
  /** `midnight`, a local `HH:MM` (lights on) or `rolling` (the last 24 h). */
  readonly dayStart: string;
}

export const defaultMetricsSettings: MetricsSettings = {
  vpd: false,
  dewPoint: false,
  dli: false,
  leafOffset: 0,
  light: 'sunlight',
  dayStart: 'midnight',
};

const LEAF_OFFSET_LIMIT = 10;
const MAX_LIGHT_FACTOR = 1;
const localTimePattern = /^([01]\d|2[0-3]):([0-5]\d)$/u;
const fields = ['vpd', 'dewPoint', 'dli', 'leafOffset', 'light', 'dayStart'] as const;

/** Checks a `metrics` setting as written (over HTTP or by `group metrics`); absent fields take defaults. */
export function parseMetricsSettings(value: unknown): MetricsSettings {
  const field = (name: string) => `settings.${METRICS_KEY}.${name}`;
  if (!isPlainObject(value)) throw InvalidInputError.forField(`settings.${METRICS_KEY}`, 'must be an object');
  for (const name of Object.keys(value)) {
    if (!(fields as readonly string[]).includes(name))
      throw InvalidInputError.forField(field(name), `is not a metrics setting (${fields.join(', ')})`);
  }
  const flag = (name: 'vpd' | 'dewPoint' | 'dli'): boolean => {
    const raw = value[name];
    if (raw === undefined) return false;
    if (typeof raw !== 'boolean') throw InvalidInputError.forField(field(name), 'must be true or false');
    return raw;
  };
  const leafOffset = value['leafOffset'] ?? 0;
  if (
    typeof leafOffset !== 'number' ||
    !Number.isFinite(leafOffset) ||
    Math.abs(leafOffset) > LEAF_OFFSET_LIMIT
  )
    throw InvalidInputError.forField(
      field('leafOffset'),
      `must be a number of °C from -${LEAF_OFFSET_LIMIT} to ${LEAF_OFFSET_LIMIT}`,
    );
  return {
    vpd: flag('vpd'),
    dewPoint: flag('dewPoint'),
    dli: flag('dli'),
    leafOffset,
    light: parseLight(value['light'] ?? defaultMetricsSettings.light, field('light')),
    dayStart: parseDayStartText(value['dayStart'] ?? defaultMetricsSettings.dayStart, field('dayStart')),
  };
}

/** A light source: a preset name, or a factor (number or numeric text) in (0, 1]. */
export function parseLight(value: unknown, field = 'light'): LightPreset | number {
  if (typeof value === 'string' && Object.hasOwn(lightPresets, value)) return value as LightPreset;
  const factor = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor <= 0 || factor > MAX_LIGHT_FACTOR)
    throw InvalidInputError.forField(
      field,
      `must be ${Object.keys(lightPresets).join(', ')} or a factor above 0 and at most ${MAX_LIGHT_FACTOR} (µmol m⁻² s⁻¹ per lux)`,
    );
  return factor;
}

export function parseDayStartText(value: unknown, field = 'dayStart'): string {
  if (value === 'midnight' || value === 'rolling') return value;
  if (typeof value === 'string' && localTimePattern.test(value)) return value;
  throw InvalidInputError.forField(field, 'must be midnight, rolling or a local time HH:MM');
}

export function dayStartOf(settings: MetricsSettings): DayStart {
  if (settings.dayStart === 'rolling') return { kind: 'rolling' };
  const match = localTimePattern.exec(settings.dayStart);
  if (match === null || settings.dayStart === '00:00') return { kind: 'midnight' };
  return { kind: 'local', hour: Number(match[1]), minute: Number(match[2]) };
}

export function lightFactorOf(settings: MetricsSettings): number {
  return typeof settings.light === 'number' ? settings.light : lightPresets[settings.light];
}

/** The group's metrics settings, or the defaults (all off) when absent or not valid. */
export function readMetricsSettings(settings: unknown): MetricsSettings {
  const raw = readSetting(settings, METRICS_KEY);
  if (raw === undefined) return defaultMetricsSettings;
  try {
    return parseMetricsSettings(raw);
  } catch {
    return defaultMetricsSettings;
  }
}

export function anyMetricOn(settings: MetricsSettings): boolean {
  return settings.vpd || settings.dewPoint || settings.dli;
}

/**
 * Throws when settings written as a whole hold a `metrics` key that is not valid, so a client cannot store
 * one the engine would silently ignore.
 */
export function assertMetricsSetting(settings: unknown): void {
  const raw = readSetting(settings, METRICS_KEY);
  if (raw !== undefined) parseMetricsSettings(raw);
}

export function withMetricsSettings(settings: unknown, metrics: MetricsSettings): unknown {
  return withSetting(settings, METRICS_KEY, { ...metrics });
}
