import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';

/** Removes a user and their credentials (`hortus user delete`); their tokens stop working at once. */
@injectable()
export class DeleteUser {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: { email: unknown; actor?: Actor }): Promise<User> {
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined || !(await this.users.delete(user.id))) {
      throw new NotFoundError('user', 'User not found.');
    }
    await this.audit.execute(input.actor, {
      action: 'user.delete',
      target: user.email,
      group: user.group,
      before: { email: user.email, group: user.group },
    });
    return user;
  }
}
