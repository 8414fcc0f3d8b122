import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type ActionSafetyState, SafeMode } from '../automations/safe-mode.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { requireSettings } from '../groups/group.js';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { requireInteger, requireText } from '../shared/validation.js';
import {
  type ActionControls,
  MAX_STALE_AFTER_MS,
  MIN_STALE_AFTER_MS,
  readActionControls,
  type SafeState,
  safeStates,
  withActionControls,
} from './action-limits.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';
import { findActionOfGroup } from './action-of-group.js';

/** One action's safe state, freshness limit and safe mode, as the CLI and `GET /api/actions/safety` show it. */
export interface ActionSafetyView extends ActionSafetyState {
  readonly group: string;
  readonly object: string;
}

/** Every action of a group with its safety, in the order of listByGroup. */
@injectable()
export class ListActionSafety {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(SafeMode) private readonly safeMode: SafeMode,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(input: { group: unknown; object?: unknown }): Promise<ActionSafetyView[]> {
    const name = requireText(input.group, 'group');
    const group = await this.groups.findByName(name);
    if (group === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    const controls = readActionControls(group.settings);
    const views: ActionSafetyView[] = [];
    const now = this.clock.now();
    for (const action of await this.actions.listByGroup(group.name)) {
      if (input.object !== undefined && action.object !== input.object) continue;
      const state = await this.safeMode.describe(action, controls.get(action.object), now);
      views.push({ group: group.name, object: action.object, ...state });
    }
    return views;
  }
}

/**
 * Sets an action's safe state (`off`, `on` or `hold`) and its freshness limit, kept in its group's
 * settings (`actionLimits`). `null` goes back to the default; absent leaves it as it is.
 */
@injectable()
export class SetActionSafety {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    safe?: unknown;
    staleAfterMs?: unknown;
    actor?: Actor;
  }): Promise<void> {
    const name = requireText(input.group, 'group');
    const object = requireText(input.object, 'object');
    if (
      input.safe !== undefined &&
      input.safe !== null &&
      !(safeStates as readonly unknown[]).includes(input.safe)
    )
      throw InvalidInputError.forField('safe', `must be one of: ${safeStates.join(', ')}`);
    const staleAfterMs =
      input.staleAfterMs === undefined || input.staleAfterMs === null
        ? input.staleAfterMs
        : requireInteger(input.staleAfterMs, 'stale-after', MIN_STALE_AFTER_MS, MAX_STALE_AFTER_MS);
    const { group } = await findActionOfGroup(this.groups, this.actions, name, object);
    const controls = readActionControls(group.settings);
    const before = safetyPart(controls.get(object));
    const entry: Record<string, unknown> = { ...controls.get(object) };
    if (input.safe === null) delete entry['safe'];
    else if (input.safe !== undefined) entry['safe'] = input.safe as SafeState;
    if (staleAfterMs === null) delete entry['staleAfterMs'];
    else if (staleAfterMs !== undefined) entry['staleAfterMs'] = staleAfterMs;
    controls.set(object, entry);
    const updated = await this.groups.replaceSettings(
      group.name,
      requireSettings(withActionControls(group.settings, controls)),
    );
    if (updated === undefined) throw new NotFoundError('group', `Group ${name} not found`);
    await this.audit.execute(input.actor, {
      action: 'action.safety',
      target: object,
      group: group.name,
      before,
      after: safetyPart(readActionControls(updated.settings).get(object)),
    });
  }
}

/** The safety part of an action's controls, for the audit trail (absent parts: the defaults). */
function safetyPart(controls: ActionControls | undefined): Pick<ActionControls, 'safe' | 'staleAfterMs'> {
  return {
    ...(controls?.safe === undefined ? {} : { safe: controls.safe }),
    ...(controls?.staleAfterMs === undefined ? {} : { staleAfterMs: controls.staleAfterMs }),
  };
}
