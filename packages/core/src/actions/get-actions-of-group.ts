import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { type Action } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class GetActionsOfGroup {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  /** The current state of every action of the group; empty when it has none. */
  async execute(input: { group: unknown }): Promise<Action[]> {
    return this.actions.listByGroup(requireText(input.group, 'group'));
  }
}
