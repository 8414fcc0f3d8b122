import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject, requireNumber, requireText } from '../shared/validation.js';

export const switchStates = ['on', 'off'] as const;
export type SwitchState = (typeof switchStates)[number];

export const frequencies = [
  'every day',
  'weekdays',
  'weekends',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;
export type Frequency = (typeof frequencies)[number];

/** `below` is accepted as a synonym of the clients' `less than`. */
export const conditions = ['above', 'less than', 'below'] as const;
export type Condition = (typeof conditions)[number];

export interface TimeAutomation {
  readonly action: SwitchState;
  /** Local wall-clock time `HH:MM`. */
  readonly time: string;
  readonly frequency: Frequency;
}

export interface SensorAutomation {
  readonly action: SwitchState;
  readonly sensor: string;
  readonly condition: Condition;
  /** A number written as a string, as clients send it. */
  readonly value: string;
}

export interface AutomationSet {
  readonly timeAutomations: readonly TimeAutomation[];
  readonly sensorAutomations: readonly SensorAutomation[];
}

/**
 * A lockout blocks the automation engine from switching its action `on`: while a sensor's newest reading is
 * below or above a value (`pump_1` never on while `esp/air/temperature` is below 2), or while another action of
 * the group has a value (`heater_1` never on while `ventilator_1` is on). Kept with the action, so it is copied,
 * listed and deleted with it. `id` numbers an action's lockouts for removal (never reused while a higher one is
 * kept). See action-lockouts.ts and automations/lockouts.ts.
 */
export type Lockout = SensorLockout | InterlockLockout;

export const lockoutConditions = ['below', 'above'] as const;
export type LockoutCondition = (typeof lockoutConditions)[number];
export const lockoutStates = ['on', 'off'] as const;

export interface SensorLockout {
  readonly id: number;
  /** The topic, resolved from a sensor name when it was set (`temperature` → `esp/air/temperature`). */
  readonly topic: string;
  readonly condition: LockoutCondition;
  readonly value: number;
}

export interface InterlockLockout {
  readonly id: number;
  /** Another action of the same group. */
  readonly while: string;
  readonly is: (typeof lockoutStates)[number];
}

export interface Action {
  readonly id: string;
  readonly group: string;
  readonly object: string;
  readonly value: string;
  readonly automations: readonly AutomationSet[];
  /** Absent when it has none; not part of what the web client's routes answer. */
  readonly lockouts?: readonly Lockout[];
}

export type NewAction = Omit<Action, 'id'>;

export const ACTION_VALUE_MAX_LENGTH = 64;
/** Bounds the work one rule set costs the automation engine. */
export const MAX_RULES_PER_KIND = 100;

/** `7:5`, `07:05`: the web client lets people type the hour and minute without leading zeros. */
const timePattern = /^(\d{1,2}):(\d{1,2})$/u;
/** A decimal comma, as people type it in much of Europe: `28,5`. */
const decimalCommaPattern = /^([+-]?\d+),(\d+)$/u;

export function requireActionValue(value: unknown): string {
  return requireText(value, 'value', ACTION_VALUE_MAX_LENGTH);
}

/** Matched ignoring case and surrounding blanks (`Monday`, `Every Day`), stored as the list spells it. */
function oneOf<T extends string>(allowed: readonly T[], value: unknown, field: string): T {
  const given = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (given !== undefined && (allowed as readonly string[]).includes(given)) return given as T;
  throw InvalidInputError.forField(field, `must be one of: ${allowed.join(', ')}`);
}

function rules(value: unknown, field: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw InvalidInputError.forField(field, 'must be an array');
  if (value.length > MAX_RULES_PER_KIND)
    throw InvalidInputError.forField(field, `must hold at most ${MAX_RULES_PER_KIND} rules`);
  return value;
}

function rule(value: unknown, field: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw InvalidInputError.forField(field, 'must be an object');
  return value;
}

function toTimeAutomation(raw: unknown, field: string): TimeAutomation {
  const entry = rule(raw, field);
  return {
    action: oneOf(switchStates, entry['action'], `${field}.action`),
    time: normalTime(entry['time'], `${field}.time`),
    frequency: oneOf(frequencies, entry['frequency'], `${field}.frequency`),
  };
}

function toSensorAutomation(raw: unknown, field: string): SensorAutomation {
  const entry = rule(raw, field);
  return {
    action: oneOf(switchStates, entry['action'], `${field}.action`),
    sensor: requireText(entry['sensor'], `${field}.sensor`),
    condition: oneOf(conditions, entry['condition'], `${field}.condition`),
    value: normalThreshold(entry['value'], `${field}.value`),
  };
}

/** `HH:MM` from `7:5`, `7:05` or `07:05`. */
function normalTime(value: unknown, field: string): string {
  const match = timePattern.exec(requireText(value, field, 8).trim());
  const hour = Number(match?.[1]);
  const minute = Number(match?.[2]);
  if (match === null || hour > 23 || minute > 59) {
    throw InvalidInputError.forField(field, 'must be HH:MM');
  }
  return `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
}

/** A threshold as text with a decimal point: `28,5` becomes `28.5`; anything else must be a number. */
function normalThreshold(value: unknown, field: string): string {
  const text = typeof value === 'string' ? value.trim().replace(decimalCommaPattern, '$1.$2') : value;
  requireNumber(text, field);
  return String(text).trim();
}

function storedRecords(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is Record<string, unknown> => {
    if (typeof item !== 'object' || item === null) return false;
    const prototype: unknown = Object.getPrototypeOf(item);
    return prototype === Object.prototype || prototype === null;
  });
}

/**
 * The automations of an action as a store holds them, reshaped to exactly the domain's shape: known fields
 * only, in a fixed order, so sub-document `_id`s of older records never leak. They were validated by
 * parseAutomations on the way in, so this never throws.
 */
export function storedAutomations(value: unknown): AutomationSet[] {
  return storedRecords(value).map((set) => ({
    timeAutomations: storedRecords(set['timeAutomations']).map((rule): TimeAutomation => ({
      action: rule['action'] as TimeAutomation['action'],
      time: String(rule['time']),
      frequency: rule['frequency'] as TimeAutomation['frequency'],
    })),
    sensorAutomations: storedRecords(set['sensorAutomations']).map((rule): SensorAutomation => ({
      action: rule['action'] as SensorAutomation['action'],
      sensor: String(rule['sensor']),
      condition: rule['condition'] as SensorAutomation['condition'],
      value: String(rule['value']),
    })),
  }));
}

/**
 * Validates automations as clients write them and keeps only the known fields, which drops the `_id`s
 * that clients echo back from get_automations.
 */
export function parseAutomations(raw: unknown): AutomationSet[] {
  return readAutomations(raw, (error) => {
    throw error;
  });
}

/**
 * As parseAutomations, but a rule that cannot be read is left out instead of refusing them all: moving
 * records from another system keeps every good rule. Answers the message of each rule left out.
 */
export function parseAutomationsKeepingGood(raw: unknown): {
  automations: AutomationSet[];
  leftOut: string[];
} {
  const leftOut: string[] = [];
  const automations = readAutomations(raw, (error) => leftOut.push(error.message));
  return { automations, leftOut };
}

function readAutomations(raw: unknown, refused: (error: InvalidInputError) => void): AutomationSet[] {
  if (!Array.isArray(raw)) throw InvalidInputError.forField('automations', 'must be an array');
  if (raw.length > MAX_RULES_PER_KIND)
    throw InvalidInputError.forField('automations', 'has too many entries');
  const each = <T>(list: unknown[], read: (item: unknown, index: number) => T): T[] =>
    list.flatMap((item, index) => {
      try {
        return [read(item, index)];
      } catch (error) {
        if (!(error instanceof InvalidInputError)) throw error;
        refused(error);
        return [];
      }
    });
  return raw.map((set, i) => {
    const entry = rule(set, `automations[${i}]`);
    return {
      timeAutomations: each(rules(entry['timeAutomations'], `automations[${i}].timeAutomations`), (r, j) =>
        toTimeAutomation(r, `automations[${i}].timeAutomations[${j}]`),
      ),
      sensorAutomations: each(
        rules(entry['sensorAutomations'], `automations[${i}].sensorAutomations`),
        (r, j) => toSensorAutomation(r, `automations[${i}].sensorAutomations[${j}]`),
      ),
    };
  });
}
