import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { ENGINE_STATE_REPOSITORY, type EngineStateRepository } from '../automations/engine-state.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { requireSettings } from '../groups/group.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireInteger, requireText } from '../shared/validation.js';
import {
  type ActionControls,
  MAX_CYCLE_MS,
  MAX_MAX_ON_MS,
  MIN_CYCLE_MS,
  MIN_MAX_ON_MS,
  onTimeStateKey,
  readActionControls,
  withActionControls,
} from './action-limits.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';
import { findActionOfGroup } from './action-of-group.js';

export interface ActionLimitView {
  readonly group: string;
  readonly object: string;
  /** The on-time and cycling limits now (absent parts: none); absent when the action has none. */
  readonly limit?: Pick<ActionControls, 'maxOnMs' | 'minOnMs' | 'minOffMs'>;
}

type LimitField = 'maxOnMs' | 'minOnMs' | 'minOffMs';
const bounds: Readonly<Record<LimitField, readonly [string, number, number]>> = {
  maxOnMs: ['max-on', MIN_MAX_ON_MS, MAX_MAX_ON_MS],
  minOnMs: ['min-on', MIN_CYCLE_MS, MAX_CYCLE_MS],
  minOffMs: ['min-off', MIN_CYCLE_MS, MAX_CYCLE_MS],
};

/** The limits part of an action's controls, as SetActionLimit answers it. */
export function limitPart(controls: ActionControls | undefined): ActionLimitView['limit'] {
  const part = {
    ...(controls?.maxOnMs === undefined ? {} : { maxOnMs: controls.maxOnMs }),
    ...(controls?.minOnMs === undefined ? {} : { minOnMs: controls.minOnMs }),
    ...(controls?.minOffMs === undefined ? {} : { minOffMs: controls.minOffMs }),
  };
  return Object.keys(part).length === 0 ? undefined : part;
}

/**
 * Sets or removes the maximum on-time and the minimum on-time and off-time of one action, kept in its
 * group's settings (`actionLimits`); the automation engine enforces them. Per field: a number sets it, `null`
 * removes it, absent leaves it as it is; at least one must be given.
 */
@injectable()
export class SetActionLimit {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(ENGINE_STATE_REPOSITORY) private readonly state: EngineStateRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    maxOnMs?: unknown;
    minOnMs?: unknown;
    minOffMs?: unknown;
    actor?: Actor;
  }): Promise<ActionLimitView> {
    const name = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    const changes = new Map<LimitField, number | undefined>();
    for (const field of Object.keys(bounds) as LimitField[]) {
      const given = input[field];
      if (given === undefined) continue;
      const [label, min, max] = bounds[field];
      changes.set(field, given === null ? undefined : requireInteger(given, label, min, max));
    }
    if (changes.size === 0) throw InvalidInputError.forField('max-on', 'is required');
    const { group } = await findActionOfGroup(this.groups, this.actions, name, object);
    const controls = readActionControls(group.settings);
    const before = controls.get(object) ?? {};
    if (changes.has('maxOnMs') && (changes.get('maxOnMs') === undefined) !== (before.maxOnMs === undefined))
      await this.restartClock(group.name, object);
    const entry: Record<string, unknown> = { ...before };
    for (const [field, value] of changes) {
      if (value === undefined) delete entry[field];
      else entry[field] = value;
    }
    controls.set(object, entry as ActionControls);
    const updated = await this.groups.replaceSettings(
      group.name,
      requireSettings(withActionControls(group.settings, controls)),
    );
    if (updated === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const limit = limitPart(readActionControls(updated.settings).get(object));
    await this.audit.execute(input.actor, {
      action: 'action.limit',
      target: object,
      group: group.name,
      before: limitPart(before) ?? null,
      after: limit ?? null,
    });
    return { group: group.name, object, ...(limit === undefined ? {} : { limit }) };
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
