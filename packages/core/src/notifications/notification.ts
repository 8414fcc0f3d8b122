import { type Actor } from '../shared/actor.js';
import { InvalidInputError } from '../shared/errors.js';

export const ignoreStates = ['false', 'true'] as const;
/** Kept as text: deployed clients compare against the strings `false` and `true`. */
export type IgnoreState = (typeof ignoreStates)[number];

/**
 * How loud an alert is: a `critical` one is sent again every ALERT_REPEAT_MS until someone acknowledges it
 * or it clears. A notification without one (the original's, or one a client stored) reads as a warning.
 */
export const severities = ['warning', 'critical'] as const;
export type Severity = (typeof severities)[number];

/** Someone said "seen, on it": who and when. Kept on the notification, which stays listed until ignored. */
export interface Acknowledgement {
  readonly at: Date;
  readonly by: Actor;
}

export interface Notification {
  readonly id: string;
  readonly group: string;
  readonly time: Date;
  readonly message: string;
  readonly ignore: IgnoreState;
  readonly topic?: string;
  readonly value?: number;
  /** Absent on notifications that are no alert of the engine (and on the original's). */
  readonly severity?: Severity;
  readonly acknowledged?: Acknowledgement;
}

export type NewNotification = Omit<Notification, 'id' | 'ignore' | 'acknowledged'>;

/** A stored severity read back; anything else is none. */
export function readSeverity(stored: unknown): Severity | undefined {
  return (severities as readonly unknown[]).includes(stored) ? (stored as Severity) : undefined;
}

/** A severity as given (CLI flag, settings); undefined keeps the default. */
export function requireSeverity(value: unknown, field = 'severity'): Severity {
  if (!(severities as readonly unknown[]).includes(value))
    throw InvalidInputError.forField(field, `must be one of ${severities.join(', ')}`);
  return value as Severity;
}

/**
 * The original's hourly check stored its own records with ignore `active` or `passive`; its list route
 * never returned them. Moved here they are kept with that state, so they are not open, yet readable (they
 * read as ignored).
 */
export const checkStates = ['active', 'passive'] as const;
export type StoredIgnoreState = IgnoreState | (typeof checkStates)[number];

/** How a stored state reads: only `false` is open. */
export function readIgnoreState(stored: unknown): IgnoreState {
  return stored === 'false' ? 'false' : 'true';
}

/** A notification moved from another system, with the ignore state it had there. */
export type ImportedNotification = Omit<Notification, 'id' | 'ignore'> & {
  readonly ignore: StoredIgnoreState;
};

/** A stored notification as another store takes it in (addMissing): without its id, with its stored state. */
export function notificationCopy(
  notification: Notification,
  ignore: StoredIgnoreState,
): ImportedNotification {
  return {
    group: notification.group,
    time: notification.time,
    message: notification.message,
    ignore,
    ...(notification.topic === undefined ? {} : { topic: notification.topic }),
    ...(notification.value === undefined ? {} : { value: notification.value }),
    ...(notification.severity === undefined ? {} : { severity: notification.severity }),
    ...(notification.acknowledged === undefined ? {} : { acknowledged: notification.acknowledged }),
  };
}

/** Keys notifications moved from another system: one (group, time, message) is stored once. */
export function notificationKey(notification: Pick<Notification, 'group' | 'time' | 'message'>): string {
  return JSON.stringify([notification.group, notification.time.getTime(), notification.message]);
}

/** Longest list accepted by one ignore call. */
export const MAX_IGNORE_TIMES = 1000;
