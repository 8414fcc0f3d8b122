import { type RecordAudit } from '../audit/record-audit.js';
import { type Group } from '../groups/group.js';
import { type GroupRepository } from '../groups/group.port.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { type Action, type Lockout } from './action.js';
import { type ActionRepository } from './action.port.js';

/**
 * The group and one of its actions, or NotFound for whichever is missing: the one look-up of the use cases
 * that edit a single action's limits, safety or lockouts.
 */
export async function findActionOfGroup(
  groups: GroupRepository,
  actions: ActionRepository,
  name: string,
  object: string,
): Promise<{ readonly group: Group; readonly action: Action }> {
  const group = await groups.findByName(name);
  if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
  const action = await actions.find(group.name, object);
  if (action === undefined) throw new NotFoundError('action', `no action ${object} in group ${group.name}`);
  return { group, action };
}

/**
 * Stores an action's new lockouts and records the change (`action.lockout.add` or `.remove`): the one way the
 * lockout use cases write. NotFound when the action was deleted meanwhile. Answers the lockouts stored.
 */
export async function saveLockouts(
  actions: ActionRepository,
  audit: RecordAudit,
  change: {
    readonly actor: Actor | undefined;
    readonly action: 'action.lockout.add' | 'action.lockout.remove';
    readonly group: string;
    readonly object: string;
    readonly before: readonly Lockout[];
    readonly after: readonly Lockout[];
  },
): Promise<readonly Lockout[]> {
  const { group, object } = change;
  const updated = await actions.setLockouts(group, object, [...change.after]);
  if (updated === undefined) throw new NotFoundError('action', `no action ${object} in group ${group}`);
  const stored = updated.lockouts ?? [];
  await audit.execute(change.actor, {
    action: change.action,
    target: object,
    group,
    before: change.before,
    after: stored,
  });
  return stored;
}
