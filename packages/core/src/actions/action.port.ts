import { type Action, type AutomationSet, type Lockout, type NewAction } from './action.js';

export interface ActionRepository {
  /** Throws ConflictError when the group already has an action with that object name. */
  create(action: NewAction): Promise<Action>;
  find(group: string, object: string): Promise<Action | undefined>;
  /** Every action of the group, ordered by object name. */
  listByGroup(group: string): Promise<Action[]>;
  /** Answers the updated action, or undefined when none matches. */
  setValue(group: string, object: string, value: string): Promise<Action | undefined>;
  /** Replaces the automations as a whole; undefined when no action matches. */
  setAutomations(
    group: string,
    object: string,
    automations: readonly AutomationSet[],
  ): Promise<Action | undefined>;
  /**
   * Replaces the action's lockouts as a whole (an empty list removes them); undefined when no action
   * matches. The group's revision changes, as for setAutomations, so engines look at the group again.
   */
  setLockouts(group: string, object: string, lockouts: readonly Lockout[]): Promise<Action | undefined>;
  /** Removes the action; false when none matches. The group's revision changes when one was removed. */
  delete(group: string, object: string): Promise<boolean>;
  /** Removes every action of the group and answers how many; the revision changes when any was removed. */
  deleteByGroup(group: string): Promise<number>;
  /**
   * Stores an action copied from another store as it is, its id too (`hortus store copy`), replacing the
   * group's action of that object name: copying it again changes nothing. The group's revision changes.
   */
  restore(action: Action): Promise<void>;
  /** Opaque text that changes whenever an action of the group is created, changed or deleted (see ReadingRepository). */
  revision(group: string): Promise<string>;
  /**
   * `revision(group)` of every group that holds actions or once did (a group whose actions were all deleted
   * stays listed, so a poller notices the deletion). One cheap read: a poller calls it every few seconds.
   */
  groupRevisions(): Promise<Map<string, string>>;
}

export const ACTION_REPOSITORY = Symbol.for('hortus.ActionRepository');
