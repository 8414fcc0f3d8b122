import { inject, injectable } from 'inversify';
import { ENGINE_STATE_REPOSITORY, type EngineStateRepository } from '../automations/engine-state.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { requireSettings } from '../groups/group.js';
import { NotFoundError } from '../shared/errors.js';
import { requireInteger, requireText } from '../shared/validation.js';
import {
  type ActionLimit,
  MAX_MAX_ON_MS,
  MIN_MAX_ON_MS,
  onTimeStateKey,
  readActionLimits,
  withActionLimits,
} from './action-limits.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

export interface ActionLimitView {
  readonly group: string;
  readonly object: string;
  /** Absent when the action has no limit (or it was removed). */
  readonly limit?: ActionLimit;
}

/**
 * Sets or removes the maximum on-time of one action, kept in its group's settings (`actionLimits`); the
 * automation engine enforces it. `maxOnMs: null` removes it.
 */
@injectable()
export class SetActionLimit {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(input: { group: unknown; object: unknown; maxOnMs: unknown }): Promise<ActionLimitView> {
    const name = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    const maxOnMs =
      input.maxOnMs === null
        ? undefined
        : requireInteger(input.maxOnMs, 'max-on', MIN_MAX_ON_MS, MAX_MAX_ON_MS);
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    if ((await this.actions.find(group.name, object)) === undefined)
      throw new NotFoundError('action', `no action ${object} in group ${group.name}`);
    const limits = readActionLimits(group.settings);
    if ((maxOnMs === undefined) !== (limits.get(object) === undefined))
      await this.restartClock(group.name, object);
    if (maxOnMs === undefined) limits.delete(object);
    else limits.set(object, { maxOnMs });
    const updated = await this.groups.replaceSettings(
      group.name,
      requireSettings(withActionLimits(group.settings, limits)),
    );
    if (updated === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const saved = readActionLimits(updated.settings).get(object);
    return { group: group.name, object, ...(saved === undefined ? {} : { limit: saved }) };
  }

  /**
   * Forgets since when the engine has seen the action on (and its rest): without a limit the engine does
   * not follow it, so what it noted before may be stale. A new limit counts from the engine's next look.
   */
  private async restartClock(group: string, object: string): Promise<void> {
    const onKey = onTimeStateKey(group, object);
    const stored = await this.state.get(onKey);
    if (stored !== undefined) await this.state.compareAndSet(onKey, stored.version, {}, this.clock.now());
  }
}
