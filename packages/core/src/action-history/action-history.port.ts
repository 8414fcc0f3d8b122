import { type ActionHistoryEntry, type NewActionHistoryEntry } from './action-history.js';

export interface ActionHistoryRepository {
  /**
   * Appends the entry and drops the oldest entries of the same action beyond `keep` (bounded growth: see
   * ACTION_HISTORY_KEEP).
   */
  record(entry: NewActionHistoryEntry, keep: number): Promise<ActionHistoryEntry>;
  /**
   * Entries of the group (of one action when `object` is given), newest first: by `at`, then the later
   * recorded first. At most `limit`.
   */
  list(group: string, object: string | undefined, limit: number): Promise<ActionHistoryEntry[]>;
  /** Removes the entries of one action; answers how many. */
  deleteByAction(group: string, object: string): Promise<number>;
  /** Removes every entry of the group; answers how many. */
  deleteByGroup(group: string): Promise<number>;
  /** The groups that hold entries, sorted (`hortus store copy`). */
  groups(): Promise<string[]>;
  /**
   * Stores an entry copied from another store as it is, its id too (`hortus store copy`): copying it again
   * changes nothing. No entry is dropped.
   */
  restore(entry: ActionHistoryEntry): Promise<void>;
}

export const ACTION_HISTORY_REPOSITORY = Symbol.for('hortus.ActionHistoryRepository');
