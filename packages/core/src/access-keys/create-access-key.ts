import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { requireText } from '../shared/validation.js';
import { type AccessKey, requireAccessKeyKind, requireKeyGroups } from './access-key.js';
import { ACCESS_KEY_SECRETS, type AccessKeySecrets } from './access-key-secrets.port.js';
import { ACCESS_KEY_REPOSITORY, type AccessKeyRepository } from './access-key.port.js';

export interface CreatedAccessKey {
  readonly key: AccessKey;
  /** Shown once: only its hash is stored, so it cannot be read again. */
  readonly secret: string;
}

@injectable()
export class CreateAccessKey {
  constructor(
    @inject(ACCESS_KEY_REPOSITORY) private readonly keys: AccessKeyRepository,
    @inject(ACCESS_KEY_SECRETS) private readonly secrets: AccessKeySecrets,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    name: unknown;
    kind: unknown;
    groups?: unknown;
    actor?: Actor;
  }): Promise<CreatedAccessKey> {
    const name = requireText(input.name, 'name');
    const kind = requireAccessKeyKind(input.kind);
    const groups = requireKeyGroups(kind, input.groups);
    const secret = this.secrets.generate();
    const key = await this.keys.create({
      name,
      kind,
      groups,
      secretHash: this.secrets.hash(secret),
      createdAt: this.clock.now(),
    });
    // Never the secret, nor its hash.
    await this.audit.execute(input.actor, {
      action: 'key.create',
      target: key.id,
      after: { name: key.name, kind: key.kind, groups: key.groups },
    });
    return { key, secret };
  }
}
