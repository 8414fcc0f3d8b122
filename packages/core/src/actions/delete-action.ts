import { inject, injectable } from 'inversify';
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
  ) {}

  async execute(input: { group: unknown; object: unknown }): Promise<{ group: string; object: string }> {
    const group = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    if (!(await this.actions.delete(group, object))) {
      throw new NotFoundError('action', `Group ${group} has no action ${object}`);
    }
    // Its history goes with it: a new action of that name starts without another's past.
    await this.history.deleteByAction(group, object);
    return { group, object };
  }
}
