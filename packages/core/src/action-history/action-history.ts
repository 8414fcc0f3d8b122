import { type Caller } from '../accounts/account.js';

/**
 * Who switched an action: a log-in (`user`, its user id), an access key (`key`, its id), a request without a
 * credential while access control is off (`anonymous`), the automation engine (`engine`, the trigger as
 * id), the server's console (`cli`), or a `.../set` MQTT command (`mqtt`; MQTT does not tell who
 * published). Boxes only read actions (COMPAT "Boxes"), so no kind is theirs.
 */
export const actorKinds = ['user', 'key', 'anonymous', 'engine', 'cli', 'mqtt'] as const;
export type ActorKind = (typeof actorKinds)[number];

export interface ActionActor {
  readonly kind: ActorKind;
  readonly id?: string;
}

/** One accepted change of an action's value, kept so people can see who switched what and when. */
export interface ActionHistoryEntry {
  readonly id: string;
  readonly group: string;
  readonly object: string;
  readonly value: string;
  readonly at: Date;
  readonly actor: ActionActor;
}

export type NewActionHistoryEntry = Omit<ActionHistoryEntry, 'id'>;

/**
 * Entries kept per action: the oldest beyond it go when a new one is recorded, so the history stays bounded
 * whatever switches it (a rule flapping every minute fills it in under a day; a pump switched twice a day
 * keeps more than a year).
 */
export const ACTION_HISTORY_KEEP = 1000;
export const DEFAULT_ACTION_HISTORY_LIMIT = 100;
export const MAX_ACTION_HISTORY_LIMIT = ACTION_HISTORY_KEEP;

export const CLI_ACTOR: ActionActor = Object.freeze({ kind: 'cli' });
export const MQTT_ACTOR: ActionActor = Object.freeze({ kind: 'mqtt' });

/** The actor of a request, as the transport established its caller. */
export function actorOf(caller: Caller): ActionActor {
  switch (caller.kind) {
    case 'user':
      return { kind: 'user', id: caller.userId };
    case 'key':
      return { kind: 'key', id: caller.key.id };
    case 'operator':
      return CLI_ACTOR;
    case 'anonymous':
      return { kind: 'anonymous' };
  }
}

/** Reads a stored actor back; a kind this version does not know is kept as `anonymous` rather than lost. */
export function storedActor(kind: unknown, id: unknown): ActionActor {
  const known = (actorKinds as readonly unknown[]).includes(kind) ? (kind as ActorKind) : 'anonymous';
  return typeof id === 'string' && id !== '' ? { kind: known, id } : { kind: known };
}
