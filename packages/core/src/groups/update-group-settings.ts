import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Group, requireSettings } from './group.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

@injectable()
export class UpdateGroupSettings {
  constructor(@inject(GROUP_REPOSITORY) private readonly groups: GroupRepository) {}

  async execute(input: { name: unknown; settings: unknown }): Promise<Group> {
    const updated = await this.groups.replaceSettings(
      requireText(input.name, 'groupId'),
      requireSettings(input.settings),
    );
    if (updated === undefined) throw new NotFoundError('group', 'Group not found');
    return updated;
  }
}
