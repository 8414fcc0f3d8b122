import { inject, injectable } from 'inversify';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type Caller } from './account.js';

/**
 * Log-out: ends the caller's log-in sessions. Tokens carry the user's session version, so ending the one a
 * browser holds ends every token of that user issued so far (other browsers log in again), the same
 * revocation as `hortus user sessions revoke` and a password reset.
 */
@injectable()
export class LogOut {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  /** Whether a session was ended: false for a caller without a valid log-in (nothing to end). */
  async execute(caller: Caller): Promise<boolean> {
    if (caller.kind !== 'user') return false;
    return (await this.users.endSessions(caller.userId)) !== undefined;
  }
}
