import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';

/** Ends every log-in token of a user issued so far (`hortus user sessions revoke`). */
@injectable()
export class RevokeSessions {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { email: unknown; actor?: Actor }): Promise<User> {
    const user = await this.users.findByEmail(requireEmail(input.email));
    const version = user === undefined ? undefined : await this.users.endSessions(user.id);
    if (user === undefined || version === undefined) throw new NotFoundError('user', 'User not found.');
    await this.audit.execute(input.actor, {
      action: 'user.sessions-revoke',
      target: user.email,
      after: { sessionsEnded: true },
    });
    return user;
  }
}
