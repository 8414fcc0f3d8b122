import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { InvalidInputError } from '../shared/errors.js';
import { isPlainObject, requireText } from '../shared/validation.js';
import { type Lockout } from './action.js';
import { MAX_LOCKOUTS_PER_ACTION, parseLockout, sameLockout } from './action-lockouts.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';
import { findActionOfGroup, saveLockouts } from './action-of-group.js';

/**
 * Adds a lockout to an action: `{sensor, below|above}` (a sensor name or a topic) or `{while, is}` (another
 * action of the group, which must exist now; one deleted later blocks, as unknown is not safe). Adding one the
 * action has already changes nothing. Answers the action's lockouts.
 */
@injectable()
export class AddActionLockout {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    lockout: unknown;
    actor?: Actor;
  }): Promise<readonly Lockout[]> {
    const name = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    if (!isPlainObject(input.lockout)) throw InvalidInputError.forField('lockout', 'must be an object');
    const wanted = parseLockout(input.lockout, object);
    const { group, action } = await findActionOfGroup(this.groups, this.actions, name, object);
    if ('while' in wanted && (await this.actions.find(group.name, wanted.while)) === undefined)
      throw InvalidInputError.forField('while', `no action ${wanted.while} in group ${group.name}`);
    const lockouts = action.lockouts ?? [];
    if (lockouts.some((lockout) => sameLockout(lockout, { ...wanted, id: 0 } as Lockout))) return lockouts;
    if (lockouts.length >= MAX_LOCKOUTS_PER_ACTION)
      throw InvalidInputError.forField('lockout', `at most ${MAX_LOCKOUTS_PER_ACTION} per action`);
    const id = Math.max(0, ...lockouts.map((lockout) => lockout.id)) + 1;
    return saveLockouts(this.actions, this.audit, {
      actor: input.actor,
      action: 'action.lockout.add',
      group: group.name,
      object,
      before: lockouts,
      after: [...lockouts, { ...wanted, id } as Lockout],
    });
  }
}
