import { inject, injectable } from 'inversify';
import { ACCESS_KEY_MAX_LENGTH, ACCESS_KEY_PREFIX, type AccessKey } from './access-key.js';
import { ACCESS_KEY_SECRETS, type AccessKeySecrets } from './access-key-secrets.port.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from './access-key.port.js';

@injectable()
export class Authenticate {
  constructor(
    @inject(ACCESS_KEY_REPOSITORY) private readonly keys: AccessKeyRepository,
    @inject(ACCESS_KEY_SECRETS) private readonly secrets: AccessKeySecrets,
  ) {}

  /** The active key the secret belongs to; undefined for anything else (unknown, revoked, malformed). */
  async execute(secret: unknown): Promise<AccessKey | undefined> {
    if (
      typeof secret !== 'string' ||
      !secret.startsWith(ACCESS_KEY_PREFIX) ||
      secret.length > ACCESS_KEY_MAX_LENGTH
    ) {
      return undefined;
    }
    const key = await this.keys.findByHash(this.secrets.hash(secret));
    return key === undefined || key.revokedAt !== undefined ? undefined : key;
  }

  /**
   * Whether access keys are in use: true once any key was created. A revoked key counts, so revoking the
   * last key locks the API instead of opening it to everyone.
   */
  async keysInUse(): Promise<boolean> {
    return this.keys.hasAny();
  }
}
