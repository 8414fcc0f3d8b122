import { type Caller } from '../accounts/account.js';

/**
 * Who did something: a log-in (`user`, its user id), an access key (`key`, its id), a request without a
 * credential while access control is off (`anonymous`), the automation engine (`engine`, the trigger as
 * id), the server's console (`cli`, the OS user as id when known), or a `.../set` MQTT command (`mqtt`;
 * MQTT does not tell who published). Boxes only read actions (COMPAT "Boxes"), so no kind is theirs.
 * One type for every record that names its actor: the action history, acknowledgements, the audit trail.
 */
export const actorKinds = ['user', 'key', 'anonymous', 'engine', 'cli', 'mqtt'] as const;
export type ActorKind = (typeof actorKinds)[number];

export interface Actor {
  readonly kind: ActorKind;
  readonly id?: string;
  /** What a person reads: a user's e-mail, a key's name; absent when unknown. */
  readonly name?: string;
}

export const CLI_ACTOR: Actor = Object.freeze({ kind: 'cli' });
export const MQTT_ACTOR: Actor = Object.freeze({ kind: 'mqtt' });
export const ANONYMOUS_ACTOR: Actor = Object.freeze({ kind: 'anonymous' });

/** The console's actor, naming the OS user who ran the command when it is known. */
export function cliActor(osUser: string | undefined): Actor {
  return osUser === undefined || osUser === '' ? CLI_ACTOR : { kind: 'cli', id: osUser };
}

/** The actor of a request, as the transport established its caller. */
export function actorOf(caller: Caller): Actor {
  switch (caller.kind) {
    case 'user':
      return { kind: 'user', id: caller.userId };
    case 'key':
      return { kind: 'key', id: caller.key.id };
    case 'operator':
      return CLI_ACTOR;
    case 'anonymous':
      return ANONYMOUS_ACTOR;
  }
}

/** Reads a stored actor back; a kind this version does not know is kept as `anonymous` rather than lost. */
export function storedActor(kind: unknown, id: unknown, name?: unknown): Actor {
  const known = (actorKinds as readonly unknown[]).includes(kind) ? (kind as ActorKind) : 'anonymous';
  return {
    kind: known,
    ...(typeof id === 'string' && id !== '' ? { id } : {}),
    ...(typeof name === 'string' && name !== '' ? { name } : {}),
  };
}

/** An actor as JSON text (SQLite columns), and back. */
export function actorText(actor: Actor): string {
  return JSON.stringify(storedActor(actor.kind, actor.id, actor.name));
}

export function actorFromText(text: string | null | undefined): Actor | undefined {
  if (text === null || text === undefined || text === '') return undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return storedActor(parsed['kind'], parsed['id'], parsed['name']);
  } catch {
    return ANONYMOUS_ACTOR;
  }
}
