import { inject, injectable } from 'inversify';
import { type Group } from './group.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

@injectable()
export class ListGroups {
  constructor(@inject(GROUP_REPOSITORY) private readonly groups: GroupRepository) {}

  async execute(): Promise<Group[]> {
    return this.groups.list();
  }
}
