import { inject, injectable } from 'inversify';
import { Lockouts } from '../automations/lockouts.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Lockout } from './action.js';
import { readActionControls } from './action-limits.js';
import { describeLockout } from './action-lockouts.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

/** One lockout as the listings show it: in words, and whether it blocks its action now (and why). */
export type LockoutView = Lockout & {
  readonly text: string;
  readonly active: boolean;
  readonly reason?: string;
};

export interface ActionLockoutsView {
  readonly group: string;
  readonly object: string;
  readonly value: string;
  readonly lockouts: readonly LockoutView[];
}

/**
 * The lockouts of a group's actions (those that have any, or the one named), with whether each blocks now,
 * decided by the engine's own Lockouts.check on the store's current values and readings.
 */
@injectable()
export class ListActionLockouts {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(Lockouts) private readonly lockouts: Lockouts,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(input: { group: unknown; object?: unknown }): Promise<ActionLockoutsView[]> {
    const name = requireText(input.group, 'group');
    const object = input.object === undefined ? undefined : requireText(input.object, 'object');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const actions = await this.actions.listByGroup(group.name);
    if (object !== undefined && !actions.some((action) => action.object === object))
      throw new NotFoundError('action', `no action ${object} in group ${group.name}`);
    const values = new Map(actions.map((action) => [action.object, action.value]));
    const controls = readActionControls(group.settings);
    const now = this.clock.now();
    const views: ActionLockoutsView[] = [];
    for (const action of actions) {
      const lockouts = action.lockouts ?? [];
      if (object === undefined ? lockouts.length === 0 : action.object !== object) continue;
      const { active } = await this.lockouts.check(action, controls.get(action.object), values, now);
      views.push({
        group: group.name,
        object: action.object,
        value: action.value,
        lockouts: lockouts.map((lockout) => {
          const found = active.find((entry) => entry.lockout.id === lockout.id);
          return {
            ...lockout,
            text: describeLockout(lockout),
            active: found !== undefined,
            ...(found === undefined ? {} : { reason: found.reason }),
          };
        }),
      });
    }
    return views;
  }
}
