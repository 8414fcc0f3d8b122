import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Group } from './group.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

@injectable()
export class GetGroup {
  constructor(@inject(GROUP_REPOSITORY) private readonly groups: GroupRepository) {}

  async execute(input: { name: unknown }): Promise<Group> {
    const group = await this.groups.findByName(requireText(input.name, 'group'));
    if (group === undefined) throw new NotFoundError('group', 'Group not found');
    return group;
  }
}
