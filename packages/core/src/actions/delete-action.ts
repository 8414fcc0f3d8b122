import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

/**
 * Removes one action with its automations; NotFoundError when there is none. Its retained MQTT topic is
 * cleared by the bridge, which notices the action revision change.
 */
@injectable()
export class DeleteAction {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  async execute(input: { group: unknown; object: unknown }): Promise<{ group: string; object: string }> {
    const group = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    if (!(await this.actions.delete(group, object))) {
      throw new NotFoundError('action', `Group ${group} has no action ${object}`);
    }
    return { group, object };
  }
}
