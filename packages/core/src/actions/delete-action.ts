import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from '../action-history/action-history.port.js';

/**
 * Removes one action with its automations and history; NotFoundError when there is none. Its retained MQTT topic is
 * cleared by the bridge, which notices the action revision change.
 */
@injectable()
export class DeleteAction {
  constructor(
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(ACTION_HISTORY_REPOSITORY) private readonly history: ActionHistoryRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    actor?: Actor;
  }): Promise<{ group: string; object: string }> {
    const group = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    // Read first, for the trail: what was deleted (its value and rules; its history is not configuration).
    const existing = await this.actions.find(group, object);
    if (existing === undefined || !(await this.actions.delete(group, object))) {
      throw new NotFoundError('action', `Group ${group} has no action ${object}`);
    }
    // Its history goes with it: a new action of that name starts without another's past.
    await this.history.deleteByAction(group, object);
    await this.audit.execute(input.actor, {
      action: 'action.delete',
      target: object,
      group,
      before: {
        value: existing.value,
        automations: existing.automations,
        ...(existing.lockouts === undefined ? {} : { lockouts: existing.lockouts }),
      },
    });
    return { group, object };
  }
}
