import { inject, injectable } from 'inversify';
import { keepActionLimits } from '../actions/action-limits.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Group, requireSettings } from './group.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

/**
 * Replaces a group's settings as a whole, as clients write them; the actions' safety limits are kept
 * unless the new settings hold `actionLimits` themselves (see keepActionLimits).
 */
@injectable()
export class UpdateGroupSettings {
  constructor(@inject(GROUP_REPOSITORY) private readonly groups: GroupRepository) {}

  async execute(input: { name: unknown; settings: unknown }): Promise<Group> {
    const name = requireText(input.name, 'groupId');
    const given = requireSettings(input.settings);
    const stored = await this.groups.findByName(name);
    if (stored === undefined) throw new NotFoundError('group', 'Group not found');
    const updated = await this.groups.replaceSettings(
      name,
      requireSettings(keepActionLimits(stored.settings, given)),
    );
    if (updated === undefined) throw new NotFoundError('group', 'Group not found');
    return updated;
  }
}
