import { inject, injectable } from 'inversify';
import { type AccessKey } from './access-key.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from './access-key.port.js';

@injectable()
export class ListAccessKeys {
  constructor(@inject(ACCESS_KEY_REPOSITORY) private readonly keys: AccessKeyRepository) {}

  /** Every key, revoked ones included, oldest first; never a secret or its hash. */
  async execute(): Promise<AccessKey[]> {
    return this.keys.list();
  }
}
