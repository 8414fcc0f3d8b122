import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, requireUserRole, type User } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

/**
 * An administrator sets what a user may do (`hortus user role`, `PUT /api/admin/users/:id/role`). The user's
 * log-in tokens keep working with the new role once the server's cache of them expires (AUTH_CACHE_MS).
 */
@injectable()
export class SetUserRole {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { userId: unknown; role: unknown; actor?: Actor }): Promise<User> {
    const role = requireUserRole(input.role);
    const before = typeof input.userId === 'string' ? await this.users.findById(input.userId) : undefined;
    const user = before === undefined ? undefined : await this.users.setRole(before.id, role);
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    await this.audit.execute(input.actor, {
      action: 'user.role',
      target: user.email,
      group: user.group,
      before: { role: before?.role },
      after: { role: user.role },
    });
    return user;
  }

  /** The same, for the user with that e-mail. */
  async byEmail(input: { email: unknown; role: unknown; actor?: Actor }): Promise<User> {
    const role = requireUserRole(input.role);
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    return this.execute({
      userId: user.id,
      role,
      ...(input.actor === undefined ? {} : { actor: input.actor }),
    });
  }
}
