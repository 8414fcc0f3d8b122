import { injectable } from 'inversify';
import { type AutomationEvent, type AutomationLogRepository, type NewAutomationEvent } from '@hortus/core';
import { newId } from './ids.js';

@injectable()
export class InMemoryAutomationLogRepository implements AutomationLogRepository {
  /** Per group, in the order recorded, so the newest is last. */
  private readonly byGroup = new Map<string, AutomationEvent[]>();

  async record(event: NewAutomationEvent): Promise<AutomationEvent> {
    const stored = toEvent({ ...event, id: newId() });
    const events = this.byGroup.get(event.group) ?? [];
    events.push(stored);
    this.byGroup.set(event.group, events);
    return toEvent(stored);
  }

  async deleteByGroup(group: string): Promise<number> {
    const removed = this.byGroup.get(group)?.length ?? 0;
    this.byGroup.delete(group);
    return removed;
  }

  async listByGroup(group: string, limit: number): Promise<AutomationEvent[]> {
    const events = this.byGroup.get(group) ?? [];
    return limit <= 0 ? [] : events.slice(-limit).reverse().map(toEvent);
  }

  async listCopies(after: string | undefined, limit: number): Promise<AutomationEvent[]> {
    if (!(limit > 0)) return [];
    // Group by group, in name order: one sequence a cursor can walk.
    const all = [...this.byGroup.keys()].sort().flatMap((group) => this.byGroup.get(group) ?? []);
    const start = after === undefined ? 0 : all.findIndex((event) => event.id === after) + 1;
    return all.slice(start, start + limit).map(toEvent);
  }

  async restore(events: readonly AutomationEvent[]): Promise<number> {
    const held = new Set([...this.byGroup.values()].flatMap((list) => list.map((stored) => stored.id)));
    let added = 0;
    for (const event of events) {
      if (held.has(event.id)) continue;
      held.add(event.id);
      const group = this.byGroup.get(event.group) ?? [];
      group.push(toEvent(event));
      this.byGroup.set(event.group, group);
      added += 1;
    }
    return added;
  }
}

/** Copies in and out so callers never share objects with the store. */
function toEvent(event: AutomationEvent): AutomationEvent {
  return {
    ...event,
    at: new Date(event.at.getTime()),
    ...(event.reading === undefined
      ? {}
      : { reading: { ...event.reading, time: new Date(event.reading.time.getTime()) } }),
    ...(event.slot === undefined ? {} : { slot: new Date(event.slot.getTime()) }),
  };
}
