import { injectable } from 'inversify';
import { type NewStageAssignment, type StageAssignment, type StageRepository } from '@hortus/core';

@injectable()
export class InMemoryStageRepository implements StageRepository {
  private readonly assignments = new Map<string, StageAssignment>();

  async get(group: string): Promise<StageAssignment | undefined> {
    const stored = this.assignments.get(group);
    return stored === undefined ? undefined : copy(stored);
  }

  async compareAndSet(assignment: NewStageAssignment, expectedVersion: number): Promise<boolean> {
    // Check and write in one synchronous step, so concurrent callers cannot both win.
    const current = this.assignments.get(assignment.group)?.version ?? 0;
    if (current !== expectedVersion) return false;
    this.assignments.set(assignment.group, copy({ ...assignment, version: current + 1 }));
    return true;
  }

  async delete(group: string): Promise<boolean> {
    return this.assignments.delete(group);
  }

  async list(): Promise<StageAssignment[]> {
    return [...this.assignments.keys()]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((group) => copy(this.assignments.get(group) as StageAssignment));
  }
}

/** Nothing the caller holds may change what is stored, nor the other way round. */
function copy(assignment: StageAssignment): StageAssignment {
  return {
    group: assignment.group,
    recipe: structuredClone(assignment.recipe),
    stage: assignment.stage,
    startedAt: new Date(assignment.startedAt.getTime()),
    applied: assignment.applied,
    ...(assignment.appliedAt === undefined ? {} : { appliedAt: new Date(assignment.appliedAt.getTime()) }),
    version: assignment.version,
  };
}
