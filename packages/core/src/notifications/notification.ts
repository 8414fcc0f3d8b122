export const ignoreStates = ['false', 'true'] as const;
/** Kept as text: deployed clients compare against the strings `false` and `true`. */
export type IgnoreState = (typeof ignoreStates)[number];

export interface Notification {
  readonly id: string;
  readonly group: string;
  readonly time: Date;
  readonly message: string;
  readonly ignore: IgnoreState;
  readonly topic?: string;
  readonly value?: number;
}

export type NewNotification = Omit<Notification, 'id' | 'ignore'>;

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
  };
}

/** Keys notifications moved from another system: one (group, time, message) is stored once. */
export function notificationKey(notification: Pick<Notification, 'group' | 'time' | 'message'>): string {
  return JSON.stringify([notification.group, notification.time.getTime(), notification.message]);
}

/** Longest list accepted by one ignore call. */
export const MAX_IGNORE_TIMES = 1000;
