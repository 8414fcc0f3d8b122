import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Lockout } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';
import { findActionOfGroup, saveLockouts } from './action-of-group.js';

/** Removes one lockout of an action by its id, or every one (`all`). Answers the lockouts left. */
@injectable()
export class RemoveActionLockout {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    id: unknown;
    actor?: Actor;
  }): Promise<readonly Lockout[]> {
    const name = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    const id = input.id === 'all' ? 'all' : Number(input.id);
    if (id !== 'all' && !(Number.isInteger(id) && id > 0))
      throw InvalidInputError.forField('id', 'must be the number of a lockout, or all');
    const { group, action } = await findActionOfGroup(this.groups, this.actions, name, object);
    const lockouts = action.lockouts ?? [];
    if (id !== 'all' && !lockouts.some((lockout) => lockout.id === id))
      throw new NotFoundError('action', `${object} in group ${group.name} has no lockout ${id}`);
    const kept = id === 'all' ? [] : lockouts.filter((lockout) => lockout.id !== id);
    return saveLockouts(this.actions, this.audit, {
      actor: input.actor,
      action: 'action.lockout.remove',
      group: group.name,
      object,
      before: lockouts,
      after: kept,
    });
  }
}
