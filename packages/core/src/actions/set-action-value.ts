import { inject, injectable } from 'inversify';
import { type ActionActor, ACTION_HISTORY_KEEP } from '../action-history/action-history.js';
import {
  ACTION_HISTORY_REPOSITORY,
  type ActionHistoryRepository,
} from '../action-history/action-history.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { type Action, requireActionValue } from './action.js';
import { ActionChanges } from './action-changes.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

/**
 * The one way an action's value changes, whoever changes it (HTTP, CLI, MQTT command, automation engine):
 * the value is stored, the change fanned out (MQTT retained topics), and recorded in the action's history
 * with its actor.
 */
@injectable()
export class SetActionValue {
  constructor(
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(ActionChanges) private readonly changes: ActionChanges,
    @inject(ACTION_HISTORY_REPOSITORY) private readonly history: ActionHistoryRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(input: {
    group: unknown;
    object: unknown;
    value: unknown;
    actor: ActionActor;
  }): Promise<Action> {
    const updated = await this.apply(
      requireText(input.group, 'group'),
      requireText(input.object, 'object'),
      requireActionValue(input.value),
      input.actor,
    );
    if (updated === undefined) throw new NotFoundError('action', 'no data found');
    return updated;
  }

  /** As execute, for callers that validated already; undefined when no action matches. */
  async apply(group: string, object: string, value: string, actor: ActionActor): Promise<Action | undefined> {
    const updated = await this.actions.setValue(group, object, value);
    if (updated === undefined) return undefined;
    // Fanned out before the history is written: boxes must follow the stored value even if that write fails.
    this.changes.emit(updated);
    await this.history.record(
      { group, object, value, at: this.clock.now(), actor: { ...actor } },
      ACTION_HISTORY_KEEP,
    );
    return updated;
  }
}
