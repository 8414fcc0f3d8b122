import { inject, injectable } from 'inversify';
import {
  type Action,
  type ActionRepository,
  type AutomationSet,
  ConflictError,
  type Lockout,
  lockoutsPart,
  type NewAction,
} from '@hortus/core';
import { newId } from './ids.js';
import { GroupRevisions, MEMORY_CHANGES, MemoryChanges } from './revisions.js';
import { compareText } from './sorted.js';

interface StoredAction {
  readonly id: string;
  readonly group: string;
  readonly object: string;
  value: string;
  automations: AutomationSet[];
  lockouts?: Lockout[] | undefined;
}

/** Copies field by field, so neither the caller's input nor an answer ever aliases stored state. */
function copyAutomations(automations: readonly AutomationSet[]): AutomationSet[] {
  return automations.map((set) => ({
    timeAutomations: set.timeAutomations.map((rule) => ({ ...rule })),
    sensorAutomations: set.sensorAutomations.map((rule) => ({ ...rule })),
  }));
}

function toAction(stored: StoredAction): Action {
  return {
    id: stored.id,
    group: stored.group,
    object: stored.object,
    value: stored.value,
    automations: copyAutomations(stored.automations),
    // Copied too: storedLockouts builds new objects.
    ...lockoutsPart(stored.lockouts),
  };
}

/** Actions indexed by group, then object name. */
@injectable()
export class InMemoryActionRepository implements ActionRepository {
  private readonly byGroup = new Map<string, Map<string, StoredAction>>();
  private readonly revisions: GroupRevisions;

  /** `changes`: the store's journal the change feed reads; shared by the store's four counted repositories. */
  constructor(@inject(MEMORY_CHANGES) changes: MemoryChanges = new MemoryChanges()) {
    this.revisions = new GroupRevisions(changes);
  }

  async create(action: NewAction): Promise<Action> {
    let objects = this.byGroup.get(action.group);
    if (objects?.has(action.object)) {
      throw new ConflictError('action', `Group ${action.group} already has an action ${action.object}`);
    }
    if (objects === undefined) {
      objects = new Map();
      this.byGroup.set(action.group, objects);
    }
    const stored: StoredAction = {
      id: newId(),
      group: action.group,
      object: action.object,
      value: action.value,
      automations: copyAutomations(action.automations),
      ...lockoutsPart(action.lockouts),
    };
    objects.set(stored.object, stored);
    this.revisions.bump(stored.group);
    return toAction(stored);
  }

  async restore(action: Action): Promise<void> {
    let objects = this.byGroup.get(action.group);
    if (objects === undefined) {
      objects = new Map();
      this.byGroup.set(action.group, objects);
    }
    objects.set(action.object, {
      id: action.id,
      group: action.group,
      object: action.object,
      value: action.value,
      automations: copyAutomations(action.automations),
      ...lockoutsPart(action.lockouts),
    });
    this.revisions.bump(action.group);
  }

  async find(group: string, object: string): Promise<Action | undefined> {
    const stored = this.byGroup.get(group)?.get(object);
    return stored === undefined ? undefined : toAction(stored);
  }

  async listByGroup(group: string): Promise<Action[]> {
    const objects = this.byGroup.get(group);
    if (objects === undefined) return [];
    return [...objects.values()].sort((a, b) => compareText(a.object, b.object)).map(toAction);
  }

  async setValue(group: string, object: string, value: string): Promise<Action | undefined> {
    const stored = this.byGroup.get(group)?.get(object);
    if (stored === undefined) return undefined;
    stored.value = value;
    this.revisions.bump(group);
    return toAction(stored);
  }

  async setAutomations(
    group: string,
    object: string,
    automations: readonly AutomationSet[],
  ): Promise<Action | undefined> {
    const stored = this.byGroup.get(group)?.get(object);
    if (stored === undefined) return undefined;
    stored.automations = copyAutomations(automations);
    this.revisions.bump(group);
    return toAction(stored);
  }

  async setLockouts(
    group: string,
    object: string,
    lockouts: readonly Lockout[],
  ): Promise<Action | undefined> {
    const stored = this.byGroup.get(group)?.get(object);
    if (stored === undefined) return undefined;
    stored.lockouts = lockoutsPart(lockouts).lockouts;
    this.revisions.bump(group);
    return toAction(stored);
  }

  async delete(group: string, object: string): Promise<boolean> {
    const objects = this.byGroup.get(group);
    if (objects?.delete(object) !== true) return false;
    if (objects.size === 0) this.byGroup.delete(group);
    this.revisions.bump(group);
    return true;
  }

  async deleteByGroup(group: string): Promise<number> {
    const removed = this.byGroup.get(group)?.size ?? 0;
    this.byGroup.delete(group);
    if (removed > 0) this.revisions.bump(group);
    return removed;
  }

  async revision(group: string): Promise<string> {
    return this.revisions.current(group);
  }

  async groupRevisions(): Promise<Map<string, string>> {
    return this.revisions.all();
  }
}
