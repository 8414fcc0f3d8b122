import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { type Action } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class GetAction {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  /** The original service ran no validation here (docs/api.md, Actions), so anything that is not a plain string simply matches nothing. */
  async execute(input: { group: unknown; object: unknown }): Promise<Action> {
    const found =
      typeof input.group === 'string' && typeof input.object === 'string'
        ? await this.actions.find(input.group.trim(), input.object.trim())
        : undefined;
    if (found === undefined) throw new NotFoundError('action', 'Action not found');
    return found;
  }
}
