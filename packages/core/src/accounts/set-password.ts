import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { COMMON_PASSWORDS, type CommonPasswords, requirePassword } from './account.js';
import { PASSWORD_HASHER, type PasswordHasher } from './accounts.port.js';

/** An administrator sets a user's password (`hortus user set-password`); every older session ends. */
@injectable()
export class SetPassword {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(PASSWORD_HASHER) private readonly hasher: PasswordHasher,
    @inject(COMMON_PASSWORDS) private readonly commonPasswords: CommonPasswords,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { email: unknown; password: unknown; actor?: Actor }): Promise<User> {
    const email = requireEmail(input.email);
    const password = requirePassword(input.password, 'password', 'new', this.commonPasswords);
    const user = await this.users.findByEmail(email);
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    const version = await this.users.setPassword(user.id, await this.hasher.hash(password), {
      endSessions: true,
    });
    if (version === undefined) throw new NotFoundError('user', 'User not found.');
    // That it was set (and the sessions ended); never the password nor its hash.
    await this.audit.execute(input.actor, {
      action: 'user.password',
      target: user.email,
      after: { passwordSet: true, sessionsEnded: true },
    });
    return user;
  }
}
