import { type Actor } from '../shared/actor.js';

/** Who switched an action: core's one actor type (shared/actor.ts). */
export type ActionActor = Actor;

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
