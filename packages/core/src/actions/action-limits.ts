import { engineStateKey } from '../automations/engine-state.port.js';
import { groupSettingKeys } from '../groups/group-setting-keys.js';
import { readSetting, withSetting } from '../groups/group-settings.js';
import { isPlainObject } from '../shared/validation.js';

/**
 * The group setting that holds the safety limits of its actions, by object name:
 * `{"actionLimits": {"pump_1": {"maxOnMs": 1800000, "minOnMs": 120000, "minOffMs": 300000, "safe": "off",
 * "staleAfterMs": 900000}}}`. Kept when a client replaces the settings without it (see UpdateGroupSettings),
 * so a client that does not know it cannot drop a safety limit.
 */
export const ACTION_LIMITS_KEY = groupSettingKeys.actionLimits;
/** The engine checks on its ticks (10 s by default): a shorter limit could not be kept. */
export const MIN_MAX_ON_MS = 60_000;
/** Below the engine state's retention (8 days), which holds since when an action is on. */
export const MAX_MAX_ON_MS = 7 * 24 * 60 * 60_000;
/** Bounds of the minimum on-time and off-time: a tick's length at least, a day at most. */
export const MIN_CYCLE_MS = 10_000;
export const MAX_CYCLE_MS = 24 * 3_600_000;
/** Bounds of an action's freshness limit: the engine's own staleness rule (10 minutes) up to a week. */
export const MIN_STALE_AFTER_MS = 10 * 60_000;
export const MAX_STALE_AFTER_MS = 7 * 24 * 3_600_000;
/** The value boxes switch their relay on for (COMPAT: `value == "on"`); the limit times only this one. */
export const ON_VALUE = 'on';
/** The value the engine switches an action to when its limit is reached. */
export const OFF_VALUE = 'off';

/** What the engine does with an action whose sensors all went stale: switch it off, on, or leave it. */
export const safeStates = ['off', 'on', 'hold'] as const;
export type SafeState = (typeof safeStates)[number];

export interface ActionLimit {
  /** The longest the action may stay `on`; then the engine switches it `off`. */
  readonly maxOnMs: number;
}

/** Everything `actionLimits` may say about one action; each part is optional. */
export interface ActionControls {
  readonly maxOnMs?: number;
  /** The engine does not switch the action off sooner than this after it was switched on. */
  readonly minOnMs?: number;
  /** The engine does not switch the action on sooner than this after it was switched off. */
  readonly minOffMs?: number;
  /** The safe state chosen for the action; absent: the default of its kind (defaultSafeState). */
  readonly safe?: SafeState;
  /** How long its sensors' readings count as fresh; absent: the default (see SafeMode). */
  readonly staleAfterMs?: number;
}

const clamp = (value: number, min: number, max: number) => Math.min(Math.max(value, min), max);

function readDuration(entry: Record<string, unknown>, field: string, min: number, max: number) {
  const value = entry[field];
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return {};
  return { [field]: clamp(value, min, max) };
}

/** Every action's controls the settings hold; a part that is not one (clients write any JSON) is skipped. */
export function readActionControls(settings: unknown): Map<string, ActionControls> {
  const raw = readSetting(settings, ACTION_LIMITS_KEY);
  const controls = new Map<string, ActionControls>();
  if (!isPlainObject(raw)) return controls;
  for (const [object, entry] of Object.entries(raw)) {
    if (!isPlainObject(entry)) continue;
    const safe = entry['safe'];
    const read: ActionControls = {
      ...readDuration(entry, 'maxOnMs', MIN_MAX_ON_MS, MAX_MAX_ON_MS),
      ...readDuration(entry, 'minOnMs', MIN_CYCLE_MS, MAX_CYCLE_MS),
      ...readDuration(entry, 'minOffMs', MIN_CYCLE_MS, MAX_CYCLE_MS),
      ...readDuration(entry, 'staleAfterMs', MIN_STALE_AFTER_MS, MAX_STALE_AFTER_MS),
      ...((safeStates as readonly unknown[]).includes(safe) ? { safe: safe as SafeState } : {}),
    };
    if (Object.keys(read).length > 0) controls.set(object, read);
  }
  return controls;
}

/** The maximum on-times the settings hold. */
export function readActionLimits(settings: unknown): Map<string, ActionLimit> {
  const limits = new Map<string, ActionLimit>();
  for (const [object, { maxOnMs }] of readActionControls(settings))
    if (maxOnMs !== undefined) limits.set(object, { maxOnMs });
  return limits;
}

/** The settings with `actionLimits` replaced (dropped when empty), every other key kept where it was. */
export function withActionControls(
  settings: unknown,
  controls: ReadonlyMap<string, ActionControls>,
): unknown {
  const kept = [...controls].filter(([, entry]) => Object.keys(entry).length > 0);
  return withSetting(settings, ACTION_LIMITS_KEY, kept.length === 0 ? undefined : Object.fromEntries(kept));
}

/**
 * The safe state of an action of this name when none is chosen: `hold` for fans (`ventilator_*`; a fan
 * switched off at noon because a sensor failed cooks the crop), `off` for pumps, lights, heaters and the rest.
 */
export function defaultSafeState(object: string): SafeState {
  return object.startsWith('ventilator') ? 'hold' : 'off';
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

/** Where the engine keeps whether the action is in safe mode: since when, its silent topics, its state. */
export function safeModeStateKey(group: string, object: string): string {
  return engineStateKey('safe', group, object);
}
