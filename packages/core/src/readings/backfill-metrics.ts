import { inject, injectable } from 'inversify';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type BackfillProgress, type BackfillResult, DeriveMetrics } from './derive-metrics.js';

/**
 * Derives a group's past (`hortus group metrics <g> --backfill`): every window from its oldest reading up
 * to where the engine took over. Values already stored are kept; a second run stores nothing new.
 */
@injectable()
export class BackfillMetrics {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(DeriveMetrics) private readonly derive: DeriveMetrics,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(
    input: { readonly group: unknown },
    onProgress?: (progress: BackfillProgress) => void,
  ): Promise<BackfillResult & { readonly group: string }> {
    const name = requireText(input.group, 'group');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    return { group: group.name, ...(await this.derive.backfill(group, this.clock.now(), onProgress)) };
  }
}
