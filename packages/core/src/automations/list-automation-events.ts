import { inject, injectable } from 'inversify';
import { requireInteger, requireText } from '../shared/validation.js';
import {
  type AutomationEvent,
  DEFAULT_AUTOMATION_EVENTS_LIMIT,
  MAX_AUTOMATION_EVENTS_LIMIT,
} from './automation-event.js';
import { AUTOMATION_LOG_REPOSITORY, type AutomationLogRepository } from './automation-log.port.js';

@injectable()
export class ListAutomationEvents {
  constructor(@inject(AUTOMATION_LOG_REPOSITORY) private readonly log: AutomationLogRepository) {}

  async execute(input: { group: unknown; count?: unknown }): Promise<AutomationEvent[]> {
    const limit =
      input.count === undefined
        ? DEFAULT_AUTOMATION_EVENTS_LIMIT
        : requireInteger(input.count, 'count', 1, MAX_AUTOMATION_EVENTS_LIMIT);
    return this.log.listByGroup(requireText(input.group, 'group'), limit);
  }
}
