import { inject, injectable } from 'inversify';
import { type Action } from './action.js';
import { ACTION_REPOSITORY, type ActionRepository } from './action.port.js';

export interface ChangedActions {
  /** The revisions read (before the actions): hand them to the next call as `seen`. */
  readonly revisions: ReadonlyMap<string, string>;
  /** Each group whose revision differs from `seen`, with all of its current actions (none when deleted). */
  readonly groups: ReadonlyMap<string, readonly Action[]>;
}

/**
 * The actions of every group whose action revision changed since `seen` (an empty `seen`: every action),
 * for a transport that mirrors action values somewhere else (MQTT retained topics). The revisions are the
 * store's own counters, so changes made by any process on the store (the CLI, another server) are found;
 * they are read before the actions, so a change landing in between shows up again on the next call.
 */
@injectable()
export class ListChangedActions {
  constructor(@inject(ACTION_REPOSITORY) private readonly actions: ActionRepository) {}

  async execute(seen: ReadonlyMap<string, string> = new Map()): Promise<ChangedActions> {
    const revisions = await this.actions.groupRevisions();
    const groups = new Map<string, readonly Action[]>();
    for (const [group, revision] of revisions) {
      if (seen.get(group) !== revision) groups.set(group, await this.actions.listByGroup(group));
    }
    return { revisions, groups };
  }
}
