import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { ConflictError, NotFoundError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { emailKey, requireEmail } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type Invitation } from './account.js';
import { TOKEN_SERVICE, type TokenService } from './accounts.port.js';

/**
 * An invitation to sign up into one group with one e-mail (`hortus user invite`). It is a signed token
 * valid for 7 days and for one sign-up (SignUp marks it used).
 */
@injectable()
export class InviteUser {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(TOKEN_SERVICE) private readonly tokens: TokenService,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    email: unknown;
    group: unknown;
    actor?: Actor;
  }): Promise<{ invitation: Invitation; code: string }> {
    const email = requireEmail(input.email);
    const group = requireText(input.group, 'group');
    if ((await this.groups.findByName(group)) === undefined) {
      throw new NotFoundError('group', `No group is named ${group}`);
    }
    if ((await this.users.findByEmail(email)) !== undefined) {
      throw new ConflictError('user', 'A user with this e-mail exists already');
    }
    const invitation = { email: emailKey(email), group };
    const code = await this.tokens.issueInvitation(invitation);
    // That one was made, for whom and into which group; never the code, which is the invitation itself.
    await this.audit.execute(input.actor, {
      action: 'user.invite',
      target: invitation.email,
      group,
      after: invitation,
    });
    return { invitation, code };
  }
}
