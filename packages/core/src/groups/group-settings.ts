import { isPlainObject } from '../shared/validation.js';
import { isValidTimeZone } from '../shared/time-zone.js';

/**
 * Reads one setting from a group's settings, which clients write as an array of one-key objects
 * (`[{tempMin: 15}, {tempMax: 30}]`); a plain object is read too.
 */
export function readSetting(settings: unknown, key: string): unknown {
  if (Array.isArray(settings)) {
    for (const entry of settings) {
      if (isPlainObject(entry) && Object.hasOwn(entry, key)) return entry[key];
    }
    return undefined;
  }
  return isPlainObject(settings) && Object.hasOwn(settings, key) ? settings[key] : undefined;
}

/** A numeric setting, accepting numbers written as text; undefined when absent, empty or not a number. */
export function readNumberSetting(settings: unknown, key: string): number | undefined {
  const raw = readSetting(settings, key);
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The group's own `timeZone` setting when it names a real zone, else the service's. */
export function groupTimeZone(settings: unknown, fallback: string): string {
  const zone = readSetting(settings, 'timeZone');
  return typeof zone === 'string' && isValidTimeZone(zone) ? zone : fallback;
}

/**
 * The settings with one key set to `value` (or dropped, when undefined), every other key kept where it was:
 * in the array of one-key objects clients write, its own entry (appended when new); in a plain object, its
 * key.
 */
export function withSetting(settings: unknown, key: string, value: unknown): unknown {
  if (isPlainObject(settings)) {
    const rest = without(settings, key);
    return value === undefined ? rest : { ...rest, [key]: value };
  }
  let placed = false;
  const entries = (Array.isArray(settings) ? (settings as unknown[]) : []).flatMap((entry) => {
    if (!(isPlainObject(entry) && Object.hasOwn(entry, key))) return [entry];
    const rest = without(entry, key);
    if (placed || value === undefined) return Object.keys(rest).length === 0 ? [] : [rest];
    placed = true;
    return [{ ...rest, [key]: value }];
  });
  return placed || value === undefined ? entries : [...entries, { [key]: value }];
}

/**
 * New settings written as a whole, with the stored value of each of `keys` carried over when they do not
 * mention it: clients write the keys they know, and must not drop what Hortus keeps beside them for the
 * engine. Settings that hold a key replace its value.
 */
export function keepSettingsNotGiven(stored: unknown, given: unknown, keys: readonly string[]): unknown {
  if (!(Array.isArray(given) || isPlainObject(given))) return given;
  let settings: unknown = given;
  for (const key of keys) {
    const kept = readSetting(stored, key);
    if (kept !== undefined && !hasSetting(given, key)) settings = withSetting(settings, key, kept);
  }
  return settings;
}

function hasSetting(settings: unknown, key: string): boolean {
  if (Array.isArray(settings))
    return settings.some((entry) => isPlainObject(entry) && Object.hasOwn(entry, key));
  return isPlainObject(settings) && Object.hasOwn(settings, key);
}

function without(object: Readonly<Record<string, unknown>>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([name]) => name !== key));
}
