import { type NewAction, parseAutomationsKeepingGood, requireActionValue } from '../actions/action.js';
import { labelOfMac, macOfBoxId } from '../devices/device-id.js';
import { type NewDevice, requireDeviceId } from '../devices/device.js';
import { groupPackages, type GroupPackage, type NewGroup, requireSettings } from '../groups/group.js';
import {
  type Chart,
  DEFAULT_CHART_ID,
  DEFAULT_CHART_NAME,
  MAX_CHART_DATA_BYTES,
  MAX_CHARTS_PER_USER,
  withChartDefaults,
} from '../history-charts/history-chart.js';
import {
  checkStates,
  type ImportedNotification,
  type StoredIgnoreState,
} from '../notifications/notification.js';
import { type NewReading, requireTopic } from '../readings/reading.js';
import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject, NAME_MAX_LENGTH, requireText, TEXT_MAX_LENGTH } from '../shared/validation.js';
import { type ImportedUser, requireEmail } from '../users/user.js';
import { type WallClockTimes } from './wall-clock-times.js';

/**
 * The collections of the original service, in the order they are copied: groups before the records that
 * name them, users before the chart records that name them. `tokens` (its log-in and reset tokens) is
 * counted and never copied.
 */
export const legacyCollections = [
  'groups',
  'users',
  'devices',
  'actions',
  'datas',
  'notifications',
  'alarms',
  'history',
  'tokens',
] as const;
export type LegacyCollection = (typeof legacyCollections)[number];

/** Where each collection of the original lands in Hortus; undefined: not copied. */
export const legacyTargets: Readonly<Record<LegacyCollection, string | undefined>> = {
  groups: 'groups',
  users: 'users',
  devices: 'devices',
  actions: 'actions',
  datas: 'readings',
  notifications: 'notifications',
  alarms: 'notifications',
  history: 'history charts',
  tokens: undefined,
};

/** A document as the original's database holds it, driver values (ObjectId, Date, Decimal128) included. */
export type LegacyDocument = Readonly<Record<string, unknown>>;

/** A record converted from one document, with what was changed on the way, for the report. */
export interface Converted<T> {
  readonly record: T;
  readonly notes: readonly string[];
}

const objectIdPattern = /^[0-9a-f]{24}$/u;

/** The document's `_id` as text (an ObjectId's hex form), for reports and checkpoints. */
export function legacyId(document: LegacyDocument): string {
  const id = document['_id'];
  return id === undefined || id === null ? '(no _id)' : String(id);
}

// Decimal text only: Number() would also take "0x1A", "1_000" is refused by it anyway, and "" would be 0.
const decimalPattern = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/iu;

/** Driver wrappers such as Decimal128 carry `_bsontype` and print their value. */
function isBsonValue(value: unknown): value is { toString(): string } {
  return typeof value === 'object' && value !== null && '_bsontype' in value;
}

/** A finite number from a number, numeric text ("23.45", as the original stored values) or a BSON decimal. */
export function legacyNumber(value: unknown, field: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw InvalidInputError.forField(field, `must be a finite number, got ${String(value)}`);
  }
  const text = typeof value === 'string' ? value.trim() : isBsonValue(value) ? value.toString() : undefined;
  if (text !== undefined && decimalPattern.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value);
  throw InvalidInputError.forField(field, `must be a number, got ${shown}`);
}

/** A date stored as a BSON date (the usual), or as ISO text or epoch milliseconds by hand-written tools. */
export function legacyDate(value: unknown, field: string): Date {
  if (value === undefined || value === null) throw InvalidInputError.forField(field, 'is missing');
  const date =
    value instanceof Date
      ? new Date(value.getTime())
      : typeof value === 'string' || typeof value === 'number'
        ? new Date(value)
        : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw InvalidInputError.forField(field, 'must be a date');
  }
  return date;
}

/** Optional text: absent, null and blank are absent; anything else must be text. */
function optionalLegacyText(value: unknown, field: string, maxLength = NAME_MAX_LENGTH): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value.trim() === '') return undefined;
  return requireText(value, field, maxLength);
}

/**
 * `datas`: `{time, topic, value: "23.45", group}`; the value becomes a number, never NaN. A time after
 * `latest` (the run's clock plus the allowed skew, in ms) is refused, as a box's would be.
 */
export function legacyReading(document: LegacyDocument, times?: WallClockTimes, latest?: number): NewReading {
  const labelled = legacyDate(document['time'], 'time');
  const group = requireText(document['group'], 'group');
  const topic = requireTopic(document['topic']);
  const value = legacyNumber(document['value'], 'value');
  const time =
    times === undefined
      ? labelled
      : times.instantOf(labelled, JSON.stringify([group, topic]), {
          storedAt: objectIdTime(legacyId(document))?.getTime(),
          value,
        });
  if (latest !== undefined && time.getTime() > latest) {
    throw InvalidInputError.forField(
      'time',
      `${time.toISOString()} is in the future: more than the allowed clock skew (MAX_CLOCK_SKEW_MS) ahead of the run's clock`,
    );
  }
  return { group, topic, value, time };
}

/** `groups`: `employee` is a list or a comma-separated text; `settings` are kept exactly. */
export function legacyGroup(document: LegacyDocument): Converted<NewGroup> {
  const notes: string[] = [];
  const name = requireText(document['name'], 'name');
  let pkg: GroupPackage = 'small';
  const given = document['package'];
  if (typeof given === 'string' && (groupPackages as readonly string[]).includes(given)) {
    pkg = given as GroupPackage;
  } else {
    notes.push(
      given === undefined || given === null
        ? 'no package: stored as small'
        : `package ${JSON.stringify(given)} is not one of ${groupPackages.join(', ')}: stored as small`,
    );
  }
  const raw = document['employee'];
  const names =
    typeof raw === 'string'
      ? raw.split(',')
      : Array.isArray(raw)
        ? raw
        : raw === undefined || raw === null
          ? []
          : [raw];
  const employee: string[] = [];
  for (const entry of names) {
    const text =
      typeof entry === 'string' ? entry.trim() : typeof entry === 'number' ? String(entry) : undefined;
    if (text === undefined) notes.push(`employee entry ${JSON.stringify(entry)} is not a name: left out`);
    else if (text !== '' && !employee.includes(text)) employee.push(text);
  }
  const settings = document['settings'];
  return {
    record: {
      name,
      package: pkg,
      employee,
      settings:
        settings === undefined || settings === null ? [] : requireSettings(plainJson(settings, false)),
    },
    notes,
  };
}

/** The hashes bcrypt libraries write: `$2a$`, `$2b$`, `$2x$` or `$2y$`, a two-digit cost, 53 characters. */
export const bcryptHashPattern = /^\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}$/u;

/** `users`: names, e-mail, group, and the bcrypt hash in `password`; the id is kept where it can be. */
export function legacyUser(document: LegacyDocument): Converted<ImportedUser> {
  const notes: string[] = [];
  const id = legacyId(document);
  const password = document['password'];
  const passwordHash =
    typeof password === 'string' && bcryptHashPattern.test(password) ? password : undefined;
  if (passwordHash === undefined) notes.push('no bcrypt hash in password: the user must set a new password');
  return {
    record: {
      ...(objectIdPattern.test(id) ? { id } : {}),
      firstName: optionalLegacyText(document['firstName'], 'firstName') ?? '',
      lastName: optionalLegacyText(document['lastName'], 'lastName') ?? '',
      email: requireEmail(document['email']),
      group: optionalLegacyText(document['group'], 'group') ?? '',
      ...(passwordHash === undefined ? {} : { passwordHash }),
    },
    notes,
  };
}

/**
 * `devices`: `{deviceId, group, type}`. The original matched the id a box sends exactly, so it holds the
 * box's own form (its MAC's bytes reversed, lower case). Twelve such digits would read as a label's MAC in
 * Hortus, with the bytes the wrong way round: they are stored as the label's MAC, by which the box is found
 * too. Fewer digits can only be the box's form and are kept as they are.
 */
export function legacyDevice(document: LegacyDocument): Converted<NewDevice> {
  const given = requireDeviceId(document['deviceId']);
  const record = {
    deviceId: given,
    group: requireText(document['group'], 'group'),
    type: requireText(document['type'], 'type'),
  };
  const mac = /^[0-9a-f]{12}$/u.test(given) ? macOfBoxId(given) : undefined;
  if (mac === undefined) return { record, notes: [] };
  const label = labelOfMac(mac);
  return {
    record: { ...record, deviceId: label },
    notes: [`deviceId ${given} is what the box sends (its MAC reversed): stored as its label MAC ${label}`],
  };
}

/**
 * `actions`: automations lose the `_id`s the original gave their sub-documents. The forms people typed into
 * the web client are read (`7:5`, `Monday`, `28,5`); a rule Hortus still cannot run is left out on its own,
 * its siblings and the action are copied, and the report says which rule went.
 */
export function legacyAction(document: LegacyDocument): Converted<NewAction> {
  const notes: string[] = [];
  const given = document['value'];
  const missing = given === undefined || given === null || given === '';
  if (missing) notes.push('no value: stored as off');
  const value = missing ? 'off' : requireActionValue(given);
  let automations: NewAction['automations'] = [];
  const raw = document['automations'];
  if (raw !== undefined && raw !== null) {
    try {
      const parsed = parseAutomationsKeepingGood(plainJson(raw));
      automations = parsed.automations;
      for (const message of parsed.leftOut) notes.push(`rule left out: ${message}`);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      notes.push(`automations not copied: ${error.message}`);
    }
  }
  return {
    record: {
      group: requireText(document['group'], 'group'),
      object: requireText(document['object'], 'object'),
      value,
      automations,
    },
    notes,
  };
}

/** `active`/`passive` (the original's hourly check) are kept as they are: not open, as they were never listed. */
function ignoreState(value: unknown, notes: string[]): StoredIgnoreState {
  if (value === 'true' || value === true) return 'true';
  if (typeof value === 'string' && (checkStates as readonly string[]).includes(value)) {
    return value as StoredIgnoreState;
  }
  if (value !== 'false' && value !== false && value !== undefined && value !== null) {
    notes.push(`ignore ${JSON.stringify(value)} is neither "true" nor "false": stored as "false"`);
  }
  return 'false';
}

function optionalValue(value: unknown, notes: string[]): { value?: number } {
  if (value === undefined || value === null || value === '') return {};
  try {
    return { value: legacyNumber(value, 'value') };
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    notes.push(`${error.message}: left out`);
    return {};
  }
}

/** `notifications`: `{group, time, message, ignore: "true" | "false", topic?, value?}`. */
export function legacyNotification(document: LegacyDocument): Converted<ImportedNotification> {
  const notes: string[] = [];
  const topic = optionalLegacyText(document['topic'], 'topic', TEXT_MAX_LENGTH);
  return {
    record: {
      group: requireText(document['group'], 'group'),
      time: legacyDate(document['time'], 'time'),
      message: requireText(document['message'], 'message', TEXT_MAX_LENGTH),
      ignore: ignoreState(document['ignore'], notes),
      ...(topic === undefined ? {} : { topic }),
      ...optionalValue(document['value'], notes),
    },
    notes,
  };
}

/** Seconds since the epoch that an ObjectId's first four bytes carry: when the document was made. */
function objectIdTime(id: string): Date | undefined {
  return objectIdPattern.test(id) ? new Date(parseInt(id.slice(0, 8), 16) * 1000) : undefined;
}

/**
 * Why an alarm is left out, or undefined. The one alarm record the original writes itself has no group:
 * no group's page ever showed it, and Hortus's notifications belong to a group.
 */
export function skippedAlarm(document: LegacyDocument): string | undefined {
  const group = document['group'];
  return group === undefined || group === null || (typeof group === 'string' && group.trim() === '')
    ? "alarm without a group (the original's own record, shown on no group's page): skipped"
    : undefined;
}

const alarmTimeFields = ['time', 'date', 'createdAt', 'timestamp'] as const;
const alarmMessageFields = ['message', 'text', 'description'] as const;

/**
 * `alarms` become notifications of the same group. Their shape is not documented, so the usual field
 * names are tried: the time from time, date, createdAt or timestamp (else from the `_id`), the message from
 * message, text or description (else made of the topic or sensor and the value).
 */
export function legacyAlarm(document: LegacyDocument): Converted<ImportedNotification> {
  const notes: string[] = [];
  const group = requireText(document['group'], 'group');
  const timeField = alarmTimeFields.find(
    (field) => document[field] !== undefined && document[field] !== null,
  );
  let time = timeField === undefined ? undefined : legacyDate(document[timeField], timeField);
  if (time === undefined) {
    time = objectIdTime(legacyId(document));
    if (time === undefined) throw InvalidInputError.forField('time', 'is missing');
    notes.push('no time: the time the alarm was stored (from its _id) is used');
  }
  const topic =
    optionalLegacyText(document['topic'], 'topic', TEXT_MAX_LENGTH) ??
    optionalLegacyText(document['sensor'], 'sensor', TEXT_MAX_LENGTH);
  const { value } = optionalValue(document['value'], notes);
  const messageField = alarmMessageFields.find(
    (field) => optionalLegacyText(document[field], field) !== undefined,
  );
  let message =
    messageField === undefined
      ? undefined
      : requireText(document[messageField], messageField, TEXT_MAX_LENGTH);
  if (message === undefined) {
    if (topic === undefined && value === undefined) {
      throw InvalidInputError.forField(
        'message',
        'is missing, and no topic, sensor or value to describe the alarm',
      );
    }
    message = ['Alarm:', topic, value].filter((part) => part !== undefined).join(' ');
  }
  return {
    record: {
      group,
      time,
      message,
      ignore: ignoreState(document['ignore'], notes),
      ...(topic === undefined ? {} : { topic }),
      ...(value === undefined ? {} : { value }),
    },
    notes,
  };
}

/**
 * Driver values as JSON: ObjectIds become their hex text, dates ISO text. Unless kept, the `_id`s the
 * original's schema gave sub-documents are dropped: clients never wrote them.
 */
function plainJson(value: unknown, dropIds = true): unknown {
  const text = JSON.stringify(value, (key, item: unknown) => (dropIds && key === '_id' ? undefined : item));
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

export interface LegacyChartRecord {
  /** The owner's id in the original; chart records are found by it. */
  readonly userId: string;
  readonly charts: readonly Chart[];
}

/** `history`: one record per user, `{userId, charts: [{chartId, chartName, chartData, createdAt, updatedAt}]}`. */
export function legacyChartRecord(document: LegacyDocument, now: Date): Converted<LegacyChartRecord> {
  const notes: string[] = [];
  const rawUserId = document['userId'];
  const userId = requireText(
    rawUserId === undefined || rawUserId === null ? rawUserId : String(rawUserId),
    'userId',
    128,
  );
  const raw = document['charts'];
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) {
    throw InvalidInputError.forField('charts', 'must be a list');
  }
  const charts: Chart[] = [];
  /** Index of the first chart of each (chartId, chartName): the one the original's look-ups found. */
  const firsts = new Map<string, number>();
  (raw ?? []).forEach((entry: unknown, index: number) => {
    if (!isPlainObject(entry)) {
      notes.push(`charts[${index}] is not an object: left out`);
      return;
    }
    const data = plainJson(entry['chartData'] ?? {});
    const chartData = withChartDefaults(isPlainObject(data) ? data : {});
    if (new TextEncoder().encode(JSON.stringify(chartData)).length > MAX_CHART_DATA_BYTES) {
      notes.push(`charts[${index}] has more than ${MAX_CHART_DATA_BYTES} bytes of chartData: left out`);
      return;
    }
    const date = (field: string): Date => {
      try {
        return legacyDate(entry[field], field);
      } catch {
        return now;
      }
    };
    const chartId = optionalLegacyText(entry['chartId'], 'chartId', 200) ?? DEFAULT_CHART_ID;
    const chartName = optionalLegacyText(entry['chartName'], 'chartName', 200) ?? DEFAULT_CHART_NAME;
    const key = JSON.stringify([chartId, chartName]);
    const first = firsts.get(key);
    if (first !== undefined) {
      notes.push(
        `charts[${index}] has the chartId and chartName of charts[${first}]: left out, the original showed the first`,
      );
      return;
    }
    firsts.set(key, index);
    charts.push({
      chartId,
      chartName,
      chartData,
      createdAt: date('createdAt'),
      updatedAt: date('updatedAt'),
    });
  });
  if (charts.length > MAX_CHARTS_PER_USER) {
    notes.push(`${charts.length - MAX_CHARTS_PER_USER} charts beyond ${MAX_CHARTS_PER_USER} left out`);
  }
  return { record: { userId, charts: charts.slice(0, MAX_CHARTS_PER_USER) }, notes };
}
