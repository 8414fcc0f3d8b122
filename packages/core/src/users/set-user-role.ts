import { inject, injectable } from 'inversify';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, requireUserRole, type User } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

/**
 * An administrator sets what a user may do (`hortus user role`, `PUT /api/admin/users/:id/role`). The user's
 * log-in tokens keep working with the new role once the server's cache of them expires (AUTH_CACHE_MS).
 */
@injectable()
export class SetUserRole {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  async execute(input: { userId: unknown; role: unknown }): Promise<User> {
    const role = requireUserRole(input.role);
    const user = typeof input.userId === 'string' ? await this.users.setRole(input.userId, role) : undefined;
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    return user;
  }

  /** The same, for the user with that e-mail. */
  async byEmail(input: { email: unknown; role: unknown }): Promise<User> {
    const role = requireUserRole(input.role);
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    return this.execute({ userId: user.id, role });
  }
}
