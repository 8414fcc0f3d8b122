import { type Group } from '../groups/group.js';
import { type GroupRepository } from '../groups/group.port.js';
import { NotFoundError } from '../shared/errors.js';
import { type Action } from './action.js';
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
