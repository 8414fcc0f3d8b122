import { type AutomationEvent, type NewAutomationEvent } from './automation-event.js';

export interface AutomationLogRepository {
  record(event: NewAutomationEvent): Promise<AutomationEvent>;
  /** Events of the group, newest first, at most `limit`. */
  listByGroup(group: string, limit: number): Promise<AutomationEvent[]>;
  /** Removes every event of the group; answers how many. */
  deleteByGroup(group: string): Promise<number>;
  /**
   * Every event of every group (`hortus store copy`): at most `limit`, each group's in the order
   * recorded, starting after the event `after` that the previous page ended with.
   */
  listCopies(after: string | undefined, limit: number): Promise<AutomationEvent[]>;
  /**
   * Stores events copied from another store as they are (their ids too), after the group's others,
   * skipping those whose id is held already (events never change). One page, written together; answers
   * how many were added.
   */
  restore(events: readonly AutomationEvent[]): Promise<number>;
}

export const AUTOMATION_LOG_REPOSITORY = Symbol.for('hortus.AutomationLogRepository');
