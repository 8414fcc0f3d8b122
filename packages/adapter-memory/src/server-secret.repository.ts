import { injectable } from 'inversify';
import { type ServerSecretRepository } from '@hortus/core';

/** Secrets of this process: a memory store forgets them on restart, as it forgets everything else. */
@injectable()
export class InMemoryServerSecretRepository implements ServerSecretRepository {
  private readonly secrets = new Map<string, string>();

  async findOrCreate(name: string, candidate: string): Promise<string> {
    const existing = this.secrets.get(name);
    if (existing !== undefined) return existing;
    this.secrets.set(name, candidate);
    return candidate;
  }

  async list(): Promise<{ name: string; value: string }[]> {
    return [...this.secrets].map(([name, value]) => ({ name, value }));
  }

  async restore(name: string, value: string): Promise<void> {
    this.secrets.set(name, value);
  }
}
