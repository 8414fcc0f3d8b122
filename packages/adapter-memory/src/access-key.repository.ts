import { injectable } from 'inversify';
import {
  type AccessKey,
  type AccessKeyCopy,
  type AccessKeyRepository,
  ConflictError,
  type NewAccessKey,
} from '@hortus/core';
import { newId } from './ids.js';
import { compareText } from './sorted.js';

interface StoredAccessKey extends NewAccessKey {
  readonly id: string;
  revokedAt?: Date;
}

function toAccessKey(stored: StoredAccessKey): AccessKey {
  return {
    id: stored.id,
    name: stored.name,
    kind: stored.kind,
    groups: [...stored.groups],
    createdAt: new Date(stored.createdAt),
    ...(stored.revokedAt === undefined ? {} : { revokedAt: new Date(stored.revokedAt) }),
  };
}

/** Keys in creation order, with a hash index that keeps secret hashes unique. */
@injectable()
export class InMemoryAccessKeyRepository implements AccessKeyRepository {
  private readonly byId = new Map<string, StoredAccessKey>();
  private readonly byHash = new Map<string, StoredAccessKey>();

  async create(key: NewAccessKey): Promise<AccessKey> {
    if (this.byHash.has(key.secretHash))
      throw new ConflictError('access-key', 'An access key with that secret exists');
    const stored: StoredAccessKey = {
      id: newId(),
      name: key.name,
      kind: key.kind,
      groups: [...key.groups],
      secretHash: key.secretHash,
      createdAt: new Date(key.createdAt),
    };
    this.byId.set(stored.id, stored);
    this.byHash.set(stored.secretHash, stored);
    return toAccessKey(stored);
  }

  async findByHash(secretHash: string): Promise<AccessKey | undefined> {
    const stored = this.byHash.get(secretHash);
    return stored === undefined ? undefined : toAccessKey(stored);
  }

  async list(): Promise<AccessKey[]> {
    return [...this.byId.values()]
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compareText(a.id, b.id))
      .map(toAccessKey);
  }

  async revoke(id: string, at: Date): Promise<AccessKey | undefined> {
    const stored = this.byId.get(id);
    if (stored === undefined) return undefined;
    stored.revokedAt ??= new Date(at);
    return toAccessKey(stored);
  }

  async listCopies(): Promise<AccessKeyCopy[]> {
    return (await this.list()).map((key) => ({
      ...key,
      secretHash: (this.byId.get(key.id) as StoredAccessKey).secretHash,
    }));
  }

  async restore(key: AccessKeyCopy): Promise<void> {
    const sameHash = this.byHash.get(key.secretHash);
    if (sameHash !== undefined) this.byId.delete(sameHash.id);
    const previous = this.byId.get(key.id);
    if (previous !== undefined) this.byHash.delete(previous.secretHash);
    const stored: StoredAccessKey = {
      id: key.id,
      name: key.name,
      kind: key.kind,
      groups: [...key.groups],
      secretHash: key.secretHash,
      createdAt: new Date(key.createdAt),
      ...(key.revokedAt === undefined ? {} : { revokedAt: new Date(key.revokedAt) }),
    };
    this.byId.set(stored.id, stored);
    this.byHash.set(stored.secretHash, stored);
  }

  async hasAny(): Promise<boolean> {
    return this.byId.size > 0;
  }
}
