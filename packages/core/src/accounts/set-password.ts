import { inject, injectable } from 'inversify';
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
  ) {}

  async execute(input: { email: unknown; password: unknown }): Promise<User> {
    const email = requireEmail(input.email);
    const password = requirePassword(input.password, 'password', 'new', this.commonPasswords);
    const user = await this.users.findByEmail(email);
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    const version = await this.users.setPassword(user.id, await this.hasher.hash(password), {
      endSessions: true,
    });
    if (version === undefined) throw new NotFoundError('user', 'User not found.');
    return user;
  }
}
