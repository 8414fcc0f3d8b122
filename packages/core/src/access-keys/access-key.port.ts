import { type AccessKey, type NewAccessKey } from './access-key.js';

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
  /** True once any key was created, revoked ones included. */
  hasAny(): Promise<boolean>;
}

export const ACCESS_KEY_REPOSITORY = Symbol.for('hortus.AccessKeyRepository');
