import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Action, parseAutomations } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class ReplaceAutomations {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  async execute(input: { group: unknown; object: unknown; automations: unknown }): Promise<Action> {
    const updated = await this.actions.setAutomations(
      requireText(input.group, 'group'),
      requireText(input.object, 'object'),
      parseAutomations(input.automations),
    );
    if (updated === undefined) throw new NotFoundError('action', 'Action not found');
    return updated;
  }
}
