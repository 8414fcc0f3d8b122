import { inject, injectable } from 'inversify';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../shared/errors.js';
import { type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type Caller } from './account.js';

@injectable()
export class GetProfile {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  /** Personal data: only the owner's log-in token reads it, whether or not access keys are in use. */
  async execute(input: { id: unknown }, caller: Caller): Promise<User> {
    if (caller.kind !== 'user') {
      throw new UnauthenticatedError(
        'Log in first: send the header Authorization: Bearer <token>',
        caller.kind === 'anonymous' && caller.rejectedCredential === true,
      );
    }
    if (caller.userId !== input.id) throw new ForbiddenError('A user may read only their own profile');
    const user = await this.users.findById(caller.userId);
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    return user;
  }
}
