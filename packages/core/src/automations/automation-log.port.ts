import { type AutomationEvent, type NewAutomationEvent } from './automation-event.js';

export interface AutomationLogRepository {
  record(event: NewAutomationEvent): Promise<AutomationEvent>;
  /** Events of the group, newest first, at most `limit`. */
  listByGroup(group: string, limit: number): Promise<AutomationEvent[]>;
  /** Removes every event of the group; answers how many. */
  deleteByGroup(group: string): Promise<number>;
}

export const AUTOMATION_LOG_REPOSITORY = Symbol.for('hortus.AutomationLogRepository');
