/** What changed in a store since a cursor: see ChangeFeed. */
export interface GroupChanges {
  /** Groups whose readings, actions, group record or notifications were written since the cursor. */
  readonly groups: readonly string[];
  /** Hand it to the next call to hear of what changes after this answer. */
  readonly cursor: string;
  /**
   * The store cannot tell what changed since the cursor given (none given, one from another store, a store
   * that started again): the caller must treat every group as changed. `groups` is then empty.
   */
  readonly reset: boolean;
}

/**
 * The store's revision counters read as a feed: which groups changed since a cursor, whoever wrote (this
 * server, another server on the store, the CLI). An answer costs what changed, not how many groups exist:
 * while nothing changes it is one cheap read. A group may be named although nothing new is visible in it
 * (a write that changed nothing, the same change reported twice); it is never left out.
 */
export interface ChangeFeed {
  changesSince(cursor: string | undefined): Promise<GroupChanges>;
}

export const CHANGE_FEED = Symbol.for('hortus.ChangeFeed');
