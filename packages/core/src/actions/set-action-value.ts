import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Action, requireActionValue } from './action.js';
import { ActionChanges } from './action-changes.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

@injectable()
export class SetActionValue {
  constructor(
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(ActionChanges) private readonly changes: ActionChanges,
  ) {}

  async execute(input: { group: unknown; object: unknown; value: unknown }): Promise<Action> {
    const updated = await this.actions.setValue(
      requireText(input.group, 'group'),
      requireText(input.object, 'object'),
      requireActionValue(input.value),
    );
    if (updated === undefined) throw new NotFoundError('action', 'no data found');
    this.changes.emit(updated);
    return updated;
  }
}
