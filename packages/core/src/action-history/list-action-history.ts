import { inject, injectable } from 'inversify';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { NotFoundError } from '../shared/errors.js';
import { requireInteger, requireText } from '../shared/validation.js';
import {
  type ActionHistoryEntry,
  DEFAULT_ACTION_HISTORY_LIMIT,
  MAX_ACTION_HISTORY_LIMIT,
} from './action-history.js';
import { ACTION_HISTORY_REPOSITORY, type ActionHistoryRepository } from './action-history.port.js';

/** Who switched the actions of a group (or one action) and when, newest first. */
@injectable()
export class ListActionHistory {
  constructor(
    @inject(ACTION_HISTORY_REPOSITORY) private readonly history: ActionHistoryRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
  ) {}

  async execute(input: { group: unknown; object?: unknown; limit?: unknown }): Promise<ActionHistoryEntry[]> {
    const group = requireText(input.group, 'group');
    const object = input.object === undefined ? undefined : requireText(input.object, 'object');
    const limit =
      input.limit === undefined
        ? DEFAULT_ACTION_HISTORY_LIMIT
        : requireInteger(input.limit, 'limit', 1, MAX_ACTION_HISTORY_LIMIT);
    // An action's history goes with it, so naming one that does not exist is a mistake worth saying.
    if (object !== undefined && (await this.actions.find(group, object)) === undefined) {
      throw new NotFoundError('action', `Group ${group} has no action ${object}`);
    }
    return this.history.list(group, object, limit);
  }
}
