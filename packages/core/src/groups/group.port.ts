import { type Group, type NewGroup } from './group.js';

export interface GroupRepository {
  /** Throws ConflictError when a group with that name exists. */
  create(group: NewGroup): Promise<Group>;
  findByName(name: string): Promise<Group | undefined>;
  /** Every group ordered by name. */
  list(): Promise<Group[]>;
  /** Replaces the settings as a whole; undefined when no group has that name. */
  replaceSettings(name: string, settings: unknown): Promise<Group | undefined>;
  /** Appends a name to the group's employee list; undefined when no group has that name. */
  addEmployee(name: string, employee: string): Promise<Group | undefined>;
  /** Sets (a number of days, 0 = forever) or clears (undefined) the retention override; undefined when no such group. */
  setRetention(name: string, days: number | undefined): Promise<Group | undefined>;
  /** Removes the group record (settings, employees); false when no group has that name. */
  delete(name: string): Promise<boolean>;
  /**
   * Stores a group copied from another store as it is, its id too (`hortus store copy`), replacing the
   * group of that name: copying it again changes nothing. The group's revision changes.
   */
  restore(group: Group): Promise<void>;
  /** Opaque text that changes whenever the named group is created, changed or deleted (see ReadingRepository). */
  revision(name: string): Promise<string>;
}

export const GROUP_REPOSITORY = Symbol.for('hortus.GroupRepository');
