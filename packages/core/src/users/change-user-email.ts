import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Caller, isAdmin } from '../accounts/account.js';
import { type Actor, actorOf } from '../shared/actor.js';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../shared/errors.js';
import { requireEmail, type User } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

@injectable()
export class ChangeUserEmail {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /**
   * Once a user has a password, their e-mail is the key to their account (a reset link goes there), so only
   * the user's own log-in token or an admin may change it: otherwise anyone could redirect the reset mail
   * and take the account. A user without a password changes as docs/api.md (User e-mail) says, without a credential: such an
   * account cannot be opened through its e-mail (RequestPasswordReset sends it no link), and the change
   * voids any reset link pending for the old address.
   */
  async execute(input: { userId: unknown; newEmail: unknown; actor?: Actor }, caller: Caller): Promise<User> {
    const email = requireEmail(input.newEmail, 'newEmail');
    const userId = typeof input.userId === 'string' && input.userId.length <= 128 ? input.userId : undefined;
    const credentials = userId === undefined ? undefined : await this.users.findCredentials(userId);
    if (userId === undefined || credentials === undefined) throw new NotFoundError('user', 'User not found.');
    const owner = caller.kind === 'user' && caller.userId === userId;
    if (credentials.passwordHash !== undefined && !owner && !isAdmin(caller)) {
      if (caller.kind === 'anonymous') {
        throw new UnauthenticatedError(
          "Changing this user's e-mail needs their log-in token: send Authorization: Bearer <token>",
          caller.rejectedCredential === true,
        );
      }
      throw new ForbiddenError("Only the user's own log-in token or an admin key may change this e-mail");
    }
    const before = await this.users.findById(userId);
    const updated = await this.users.changeEmail(userId, email);
    if (updated === undefined) throw new NotFoundError('user', 'User not found.');
    await this.audit.execute(input.actor ?? actorOf(caller), {
      action: 'user.email',
      target: updated.id,
      ...(before === undefined ? {} : { before: { email: before.email } }),
      after: { email: updated.email },
    });
    return updated;
  }

  /** The same change for the user who has the e-mail `email` now (`hortus user change-email`). */
  async byEmail(input: { email: unknown; newEmail: unknown; actor?: Actor }, caller: Caller): Promise<User> {
    requireEmail(input.newEmail, 'newEmail');
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    return this.execute(
      {
        userId: user.id,
        newEmail: input.newEmail,
        ...(input.actor === undefined ? {} : { actor: input.actor }),
      },
      caller,
    );
  }
}
