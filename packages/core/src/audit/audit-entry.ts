import { type Actor } from '../shared/actor.js';

/**
 * One change of configuration: who (actor), what (`action`, on `target`, in `group` when it is a group's),
 * the value before and after (JSON; absent for a thing created or removed), and when. Kept for people
 * who ask "who changed this?"; secrets (key secrets, webhook secrets, passwords) are never in it.
 */
export interface AuditEntry {
  readonly id: string;
  readonly at: Date;
  readonly actor: Actor;
  /** `<resource>.<verb>`: `group.settings`, `alert.range`, `key.create`, `device.lock`, ... */
  readonly action: string;
  /** What changed: a group name, a topic, a device id, a key id, an e-mail. */
  readonly target: string;
  readonly group?: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

export type NewAuditEntry = Omit<AuditEntry, 'id'>;

export interface AuditQuery {
  /** Only this group's entries. */
  readonly group?: string;
  /** Only entries at or after this time. */
  readonly since?: Date;
  readonly limit: number;
}

export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 1000;
