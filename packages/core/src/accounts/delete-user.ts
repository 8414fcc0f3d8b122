import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';

/** Removes a user and their credentials (`hortus user delete`); their tokens stop working at once. */
@injectable()
export class DeleteUser {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  async execute(input: { email: unknown }): Promise<User> {
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined || !(await this.users.delete(user.id))) {
      throw new NotFoundError('user', 'User not found.');
    }
    return user;
  }
}
