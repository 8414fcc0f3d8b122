import { engineStateKey } from '../automations/engine-state.port.js';
import { groupSettingKeys } from '../groups/group-setting-keys.js';
import { readSetting, withSetting } from '../groups/group-settings.js';
import { isPlainObject } from '../shared/validation.js';

/**
 * The group setting that holds the safety limits of its actions, by object name:
 * `{"actionLimits": {"pump_1": {"maxOnMs": 1800000}}}`. Kept when a client replaces the settings without
 * it (see UpdateGroupSettings), so a client that does not know it cannot drop a safety limit.
 */
export const ACTION_LIMITS_KEY = groupSettingKeys.actionLimits;
/** The engine checks on its ticks (10 s by default): a shorter limit could not be kept. */
export const MIN_MAX_ON_MS = 60_000;
/** Below the engine state's retention (8 days), which holds since when an action is on. */
export const MAX_MAX_ON_MS = 7 * 24 * 60 * 60_000;
/** The value boxes switch their relay on for (COMPAT: `value == "on"`); the limit times only this one. */
export const ON_VALUE = 'on';
/** The value the engine switches an action to when its limit is reached. */
export const OFF_VALUE = 'off';

export interface ActionLimit {
  /** The longest the action may stay `on`; then the engine switches it `off`. */
  readonly maxOnMs: number;
}

/** The limits the settings hold; an entry that is not one (clients write any JSON) is skipped. */
export function readActionLimits(settings: unknown): Map<string, ActionLimit> {
  const raw = readSetting(settings, ACTION_LIMITS_KEY);
  const limits = new Map<string, ActionLimit>();
  if (!isPlainObject(raw)) return limits;
  for (const [object, entry] of Object.entries(raw)) {
    const maxOnMs = isPlainObject(entry) ? entry['maxOnMs'] : undefined;
    if (typeof maxOnMs !== 'number' || !Number.isFinite(maxOnMs) || maxOnMs <= 0) continue;
    limits.set(object, { maxOnMs: Math.min(Math.max(maxOnMs, MIN_MAX_ON_MS), MAX_MAX_ON_MS) });
  }
  return limits;
}

/** The settings with `actionLimits` replaced (dropped when empty), every other key kept where it was. */
export function withActionLimits(settings: unknown, limits: ReadonlyMap<string, ActionLimit>): unknown {
  return withSetting(settings, ACTION_LIMITS_KEY, limits.size === 0 ? undefined : Object.fromEntries(limits));
}

/** `30m`, `2h`, `90s` for people: the limit as the listings show it. */
export function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** Where the engine keeps since when it has seen the action on (`since`) and the end of its rest. */
export function onTimeStateKey(group: string, object: string): string {
  return engineStateKey('on', group, object);
}
