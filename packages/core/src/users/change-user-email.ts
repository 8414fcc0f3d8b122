import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, type User } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

@injectable()
export class ChangeUserEmail {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  async execute(input: { userId: unknown; newEmail: unknown }): Promise<User> {
    const email = requireEmail(input.newEmail, 'newEmail');
    const updated =
      typeof input.userId === 'string' && input.userId.length <= 128
        ? await this.users.changeEmail(input.userId, email)
        : undefined;
    if (updated === undefined) throw new NotFoundError('user', 'User not found.');
    return updated;
  }
}
