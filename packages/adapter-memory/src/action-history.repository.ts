import { injectable } from 'inversify';
import {
  type ActionHistoryEntry,
  type ActionHistoryRepository,
  type NewActionHistoryEntry,
} from '@hortus/core';
import { newId } from './ids.js';

interface StoredEntry {
  readonly entry: ActionHistoryEntry;
  /** Recording order: breaks ties between entries of the same instant, the later first. */
  readonly seq: number;
}

/** Copies in and out, so callers never share objects with the store. */
const actionHistoryMapper = {
  toEntity(entry: ActionHistoryEntry): ActionHistoryEntry {
    return {
      id: entry.id,
      group: entry.group,
      object: entry.object,
      value: entry.value,
      at: new Date(entry.at.getTime()),
      actor: entry.actor.id === undefined ? { kind: entry.actor.kind } : { ...entry.actor },
    };
  },
};

function newestFirst(a: StoredEntry, b: StoredEntry): number {
  return b.entry.at.getTime() - a.entry.at.getTime() || b.seq - a.seq;
}

@injectable()
export class InMemoryActionHistoryRepository implements ActionHistoryRepository {
  /** Per group, in no particular order (restored entries may be older than recorded ones). */
  private readonly byGroup = new Map<string, StoredEntry[]>();
  private seq = 0;

  async record(entry: NewActionHistoryEntry, keep: number): Promise<ActionHistoryEntry> {
    const stored = this.add(actionHistoryMapper.toEntity({ ...entry, id: newId() }));
    const entries = this.byGroup.get(entry.group) ?? [];
    const surplus = new Set(
      entries
        .filter((held) => held.entry.object === entry.object)
        .sort(newestFirst)
        .slice(Math.max(keep, 0)),
    );
    if (surplus.size > 0)
      this.byGroup.set(
        entry.group,
        entries.filter((held) => !surplus.has(held)),
      );
    return actionHistoryMapper.toEntity(stored.entry);
  }

  async list(group: string, object: string | undefined, limit: number): Promise<ActionHistoryEntry[]> {
    if (!(limit > 0)) return [];
    return (this.byGroup.get(group) ?? [])
      .filter((held) => object === undefined || held.entry.object === object)
      .sort(newestFirst)
      .slice(0, Math.floor(limit))
      .map((held) => actionHistoryMapper.toEntity(held.entry));
  }

  async deleteByAction(group: string, object: string): Promise<number> {
    const entries = this.byGroup.get(group) ?? [];
    const kept = entries.filter((held) => held.entry.object !== object);
    this.byGroup.set(group, kept);
    return entries.length - kept.length;
  }

  async deleteByGroup(group: string): Promise<number> {
    const removed = this.byGroup.get(group)?.length ?? 0;
    this.byGroup.delete(group);
    return removed;
  }

  async groups(): Promise<string[]> {
    return [...this.byGroup]
      .filter(([, entries]) => entries.length > 0)
      .map(([group]) => group)
      .sort();
  }

  async restore(entry: ActionHistoryEntry): Promise<void> {
    const entries = this.byGroup.get(entry.group) ?? [];
    if (entries.some((held) => held.entry.id === entry.id)) return;
    this.add(actionHistoryMapper.toEntity(entry));
  }

  private add(entry: ActionHistoryEntry): StoredEntry {
    this.seq += 1;
    const stored = { entry, seq: this.seq };
    const entries = this.byGroup.get(entry.group) ?? [];
    entries.push(stored);
    this.byGroup.set(entry.group, entries);
    return stored;
  }
}
