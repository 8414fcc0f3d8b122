import { inject, injectable } from 'inversify';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

@injectable()
export class CheckGroup {
  constructor(@inject(GROUP_REPOSITORY) private readonly groups: GroupRepository) {}

  /** Anything that is not a usable name is simply a group that does not exist. */
  async execute(input: { name: unknown }): Promise<boolean> {
    if (typeof input.name !== 'string' || input.name.trim() === '') return false;
    return (await this.groups.findByName(input.name.trim())) !== undefined;
  }
}
