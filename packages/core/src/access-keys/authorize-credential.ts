import { inject, injectable } from 'inversify';
import { type Caller } from '../accounts/account.js';
import { VerifySession } from '../accounts/verify-session.js';
import { ACCESS_KEY_PREFIX } from './access-key.js';
import {
  type AccessDecision,
  type AccessOperation,
  type AccessTarget,
  decideAccess,
  decideSessionAccess,
} from './access-policy.js';
import { Authenticate } from './authenticate.js';

const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/iu;

/**
 * The permission model for a door that receives a credential as text beside its request (an MQTT command's
 * `authorization` property): the key or log-in token it names, and core's decision for it. HTTP resolves its
 * credentials itself (with a cache) and asks the same decideAccess/decideSessionAccess.
 */
@injectable()
export class AuthorizeCredential {
  constructor(
    @inject(Authenticate) private readonly authenticate: Authenticate,
    @inject(VerifySession) private readonly verifySession: VerifySession,
  ) {}

  /** `Bearer <secret>` or the secret alone; an unknown, revoked or expired one is refused. */
  async execute(
    credential: string,
    operation: AccessOperation,
    target: AccessTarget,
  ): Promise<AccessDecision & { readonly caller?: Caller }> {
    const secret = bearer.exec(credential)?.[1] ?? credential.trim();
    if (secret.startsWith(ACCESS_KEY_PREFIX)) {
      const key = await this.authenticate.execute(secret);
      if (key === undefined) return { allowed: false, reason: 'The access key is not valid' };
      return { ...decideAccess(key, operation, target), caller: { kind: 'key', key } };
    }
    const session = await this.verifySession.execute(secret);
    if (session === undefined) {
      return { allowed: false, reason: 'The log-in token is not valid or has expired' };
    }
    const principal = { userId: session.userId, group: session.group, role: session.role };
    return {
      ...decideSessionAccess(principal, operation, target),
      caller: { kind: 'user', ...principal },
    };
  }
}
