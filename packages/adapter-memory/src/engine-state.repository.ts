import { injectable } from 'inversify';
import { type EngineState, type EngineStateRepository, type EngineValue } from '@hortus/core';

@injectable()
export class InMemoryEngineStateRepository implements EngineStateRepository {
  private readonly entries = new Map<string, EngineState>();

  async get(key: string): Promise<EngineState | undefined> {
    const entry = this.entries.get(key);
    return entry === undefined ? undefined : copy(entry);
  }

  async compareAndSet(key: string, expectedVersion: number, value: EngineValue, at: Date): Promise<boolean> {
    // Check and write happen in one synchronous step, so concurrent callers cannot both win.
    const current = this.entries.get(key)?.version ?? 0;
    if (current !== expectedVersion) return false;
    this.entries.set(key, { version: current + 1, value: { ...value }, updatedAt: new Date(at.getTime()) });
    return true;
  }

  async list(): Promise<{ key: string; state: EngineState }[]> {
    return [...this.entries.keys()]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((key) => ({ key, state: copy(this.entries.get(key) as EngineState) }));
  }

  async restore(key: string, state: EngineState): Promise<void> {
    this.entries.set(key, copy(state));
  }

  async purgeBefore(before: Date): Promise<number> {
    let purged = 0;
    for (const [key, entry] of this.entries) {
      if (entry.updatedAt < before) {
        this.entries.delete(key);
        purged += 1;
      }
    }
    return purged;
  }
}

function copy(entry: EngineState): EngineState {
  return {
    version: entry.version,
    value: { ...entry.value },
    updatedAt: new Date(entry.updatedAt.getTime()),
  };
}
