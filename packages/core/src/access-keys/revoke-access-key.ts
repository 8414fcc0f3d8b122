import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { type AccessKey } from './access-key.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from './access-key.port.js';

@injectable()
export class RevokeAccessKey {
  constructor(
    @inject(ACCESS_KEY_REPOSITORY) private readonly keys: AccessKeyRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Revoking twice is no error: the key stays revoked since the first time. */
  async execute(input: { id: unknown }): Promise<AccessKey> {
    const revoked =
      typeof input.id === 'string' ? await this.keys.revoke(input.id.trim(), this.clock.now()) : undefined;
    if (revoked === undefined) throw new NotFoundError('access-key', 'Access key not found');
    return revoked;
  }
}
