import { inject, injectable } from 'inversify';
import { ConflictError, type Group, type GroupRepository, type NewGroup } from '@hortus/core';
import { newId } from './ids.js';
import { GroupRevisions, MEMORY_CHANGES, MemoryChanges } from './revisions.js';
import { compareText } from './sorted.js';

interface StoredGroup {
  readonly id: string;
  readonly name: string;
  readonly package: Group['package'];
  employee: readonly string[];
  settings: unknown;
  retentionDays?: number;
}

function toGroup(stored: StoredGroup): Group {
  return {
    id: stored.id,
    name: stored.name,
    package: stored.package,
    employee: [...stored.employee],
    settings: structuredClone(stored.settings),
    ...(stored.retentionDays === undefined ? {} : { retentionDays: stored.retentionDays }),
  };
}

/** Groups indexed by name, their identifier everywhere. */
@injectable()
export class InMemoryGroupRepository implements GroupRepository {
  private readonly byName = new Map<string, StoredGroup>();
  private readonly revisions: GroupRevisions;

  /** `changes`: the store's journal the change feed reads; shared by the store's four counted repositories. */
  constructor(@inject(MEMORY_CHANGES) changes: MemoryChanges = new MemoryChanges()) {
    this.revisions = new GroupRevisions(changes);
  }

  async create(group: NewGroup): Promise<Group> {
    if (this.byName.has(group.name)) {
      throw new ConflictError('group', `A group named ${group.name} exists already`);
    }
    const stored: StoredGroup = {
      id: newId(),
      name: group.name,
      package: group.package,
      employee: [...group.employee],
      settings: structuredClone(group.settings),
    };
    this.byName.set(stored.name, stored);
    this.revisions.bump(stored.name);
    return toGroup(stored);
  }

  async findByName(name: string): Promise<Group | undefined> {
    const stored = this.byName.get(name);
    return stored === undefined ? undefined : toGroup(stored);
  }

  async list(): Promise<Group[]> {
    return [...this.byName.values()].sort((a, b) => compareText(a.name, b.name)).map(toGroup);
  }

  async replaceSettings(name: string, settings: unknown): Promise<Group | undefined> {
    const stored = this.byName.get(name);
    if (stored === undefined) return undefined;
    stored.settings = structuredClone(settings);
    this.revisions.bump(name);
    return toGroup(stored);
  }

  async addEmployee(name: string, employee: string): Promise<Group | undefined> {
    const stored = this.byName.get(name);
    if (stored === undefined) return undefined;
    stored.employee = [...stored.employee, employee];
    this.revisions.bump(name);
    return toGroup(stored);
  }

  async setRetention(name: string, days: number | undefined): Promise<Group | undefined> {
    const stored = this.byName.get(name);
    if (stored === undefined) return undefined;
    if (days === undefined) delete stored.retentionDays;
    else stored.retentionDays = days;
    this.revisions.bump(name);
    return toGroup(stored);
  }

  async delete(name: string): Promise<boolean> {
    if (!this.byName.delete(name)) return false;
    this.revisions.bump(name);
    return true;
  }

  async restore(group: Group): Promise<void> {
    this.byName.set(group.name, {
      id: group.id,
      name: group.name,
      package: group.package,
      employee: [...group.employee],
      settings: structuredClone(group.settings),
      ...(group.retentionDays === undefined ? {} : { retentionDays: group.retentionDays }),
    });
    this.revisions.bump(group.name);
  }

  async revision(name: string): Promise<string> {
    return this.revisions.current(name);
  }
}
