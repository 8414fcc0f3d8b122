import { type Recipe } from './recipe.js';

/** A group's recipe and where in it the group is. */
export interface StageAssignment {
  readonly group: string;
  /** The whole recipe as it was assigned, so the file is not needed again (restarts, other servers). */
  readonly recipe: Recipe;
  /** The current stage's name. */
  readonly stage: string;
  /** When the current stage started. */
  readonly startedAt: Date;
  /**
   * Whether the current stage's bands and rule thresholds were written into the group. A stage change
   * sets it false and whoever writes them sets it true, so a crash in between only delays the writing.
   */
  readonly applied: boolean;
  readonly appliedAt?: Date;
  /** Starts at 1; every write adds one (see compareAndSet). */
  readonly version: number;
}

export type NewStageAssignment = Omit<StageAssignment, 'version'>;

/**
 * One assignment per group. Writes are compare-and-set on the version, so two engines moving a group to
 * its next stage at the same time cannot both do it.
 */
export interface StageRepository {
  get(group: string): Promise<StageAssignment | undefined>;
  /**
   * Stores the assignment as version `expectedVersion + 1` when the group's stored version is
   * `expectedVersion` (0 = none). Answers false, changing nothing, when another writer got there first.
   */
  compareAndSet(assignment: NewStageAssignment, expectedVersion: number): Promise<boolean>;
  /** Removes the group's assignment; false when it had none. */
  delete(group: string): Promise<boolean>;
  /** Every assignment, ordered by group name. */
  list(): Promise<StageAssignment[]>;
}

export const STAGE_REPOSITORY = Symbol.for('hortus.StageRepository');
