import { type AccessKey, type AccessKeyCopy, type NewAccessKey } from './access-key.js';

export interface AccessKeyRepository {
  /** Throws ConflictError when a key with that secretHash exists. */
  create(key: NewAccessKey): Promise<AccessKey>;
  /** Revoked keys are found too; any text the store did not issue is simply not found. */
  findByHash(secretHash: string): Promise<AccessKey | undefined>;
  /** Every key, revoked ones included, oldest first. */
  list(): Promise<AccessKey[]>;
  /**
   * Marks the key revoked at `at`; a key revoked before keeps its first revokedAt. Undefined when no key
   * has that id (malformed ids included).
   */
  revoke(id: string, at: Date): Promise<AccessKey | undefined>;
  /** Every key with its secret's digest, revoked ones included, oldest first (`hortus store copy`). */
  listCopies(): Promise<AccessKeyCopy[]>;
  /**
   * Stores a key copied from another store as it is (id, digest, times), replacing the key with that id
   * (and one with that digest under another id): copying it again changes nothing.
   */
  restore(key: AccessKeyCopy): Promise<void>;
  /** True once any key was created, revoked ones included. */
  hasAny(): Promise<boolean>;
}

export const ACCESS_KEY_REPOSITORY = Symbol.for('hortus.AccessKeyRepository');
