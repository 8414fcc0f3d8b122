import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { type AccessKey } from './access-key.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from './access-key.port.js';

@injectable()
export class RevokeAccessKey {
  constructor(
    @inject(ACCESS_KEY_REPOSITORY) private readonly keys: AccessKeyRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /** Revoking twice is no error: the key stays revoked since the first time. */
  async execute(input: { id: unknown; actor?: Actor }): Promise<AccessKey> {
    const revoked =
      typeof input.id === 'string' ? await this.keys.revoke(input.id.trim(), this.clock.now()) : undefined;
    if (revoked === undefined) throw new NotFoundError('access-key', 'Access key not found');
    await this.audit.execute(input.actor, {
      action: 'key.revoke',
      target: revoked.id,
      after: { name: revoked.name, revokedAt: revoked.revokedAt },
    });
    return revoked;
  }
}
