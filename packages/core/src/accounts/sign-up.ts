import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { actorOf } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { ConflictError, ForbiddenError, InvalidInputError, isDomainError } from '../shared/errors.js';
import { requireText } from '../shared/validation.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { emailKey, requireEmail, type User, type UserOrigin } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import {
  ACCOUNT_SETTINGS,
  type AccountSettings,
  type Caller,
  EMAIL_TAKEN,
  INVALID_GROUP,
  isAdmin,
  requirePassword,
  COMMON_PASSWORDS,
  type CommonPasswords,
  type VerifiedInvitation,
} from './account.js';
import { PASSWORD_HASHER, type PasswordHasher, TOKEN_SERVICE, type TokenService } from './accounts.port.js';
import { SignUpThrottle } from './signup-throttle.js';

export interface SignUpInput {
  readonly firstName: unknown;
  readonly lastName: unknown;
  readonly email: unknown;
  readonly password: unknown;
  readonly group: unknown;
  /** A code from `hortus user invite`, needed while access keys are required (unless sign-up is open). */
  readonly invitation?: unknown;
}

/** Who asks, and whether the server requires access keys right now (the transport knows). */
export interface SignUpContext {
  readonly caller: Caller;
  readonly accessRequired: boolean;
  /** Where the request came from, for the sign-up throttle (none: counted only towards the total). */
  readonly clientAddress?: string;
}

@injectable()
export class SignUp {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(PASSWORD_HASHER) private readonly hasher: PasswordHasher,
    @inject(TOKEN_SERVICE) private readonly tokens: TokenService,
    @inject(ACCOUNT_SETTINGS) private readonly settings: AccountSettings,
    @inject(COMMON_PASSWORDS) private readonly commonPasswords: CommonPasswords,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SignUpThrottle) private readonly throttle: SignUpThrottle,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  /**
   * Creates the user with a bcrypt hash of the password and appends `firstName + lastName` to the group's
   * employee list (as the original did). While access keys are required, a stranger signing up would gain
   * a token that reads the group, so then it takes an admin key or an invitation for this e-mail and group.
   */
  async execute(input: SignUpInput, context: SignUpContext): Promise<User> {
    const firstName = requireText(input.firstName, 'firstName');
    const lastName = requireText(input.lastName, 'lastName');
    const email = requireEmail(input.email);
    const password = requirePassword(input.password, 'password', 'new', this.commonPasswords);
    const group = requireText(input.group, 'group');
    const allowed = await this.checkAllowed(input.invitation, email, group, context);
    if ((await this.groups.findByName(group)) === undefined) {
      throw new InvalidInputError(INVALID_GROUP, [{ field: 'group', problem: 'names no group' }]);
    }
    if ((await this.users.findByEmail(email)) !== undefined) throw new ConflictError('user', EMAIL_TAKEN);
    // Counted before the slow hash; an admin (the operator, an admin key) is not limited.
    if (!isAdmin(context.caller)) await this.throttle.take(context.clientAddress ?? '');
    const passwordHash = await this.hasher.hash(password, { deferrable: true });
    let user: User;
    try {
      user = await this.users.create(
        { firstName, lastName, email, group },
        { passwordHash, provenance: { origin: allowed.origin, createdAt: this.clock.now() } },
      );
    } catch (error) {
      if (isDomainError(error) && error.code === 'CONFLICT') throw new ConflictError('user', EMAIL_TAKEN);
      throw error;
    }
    const { invitation } = allowed;
    try {
      // Used up once it has made an account, even if that account is deleted or changes e-mail later.
      if (
        invitation !== undefined &&
        !(await this.users.useInvitation(invitation.id, invitation.expiresAt, this.clock.now()))
      ) {
        throw new ForbiddenError('The invitation has been used already');
      }
      await this.groups.addEmployee(group, `${firstName}${lastName}`);
    } catch (error) {
      // Nothing half-written: without its invitation or the employee entry the sign-up did not happen.
      await this.users.delete(user.id).catch(() => false);
      throw error;
    }
    // Who: the admin who signed them up, else the new user themselves (by invitation or open sign-up).
    const caller = context.caller;
    await this.audit.execute(caller.kind === 'anonymous' ? { kind: 'user', id: user.id } : actorOf(caller), {
      action: 'user.create',
      target: user.email,
      group: user.group,
      after: { email: user.email, group: user.group, role: user.role, origin: allowed.origin },
    });
    return user;
  }

  /** Throws when this sign-up is not allowed; else answers what allowed it (kept for `hortus user list`). */
  private async checkAllowed(
    invitation: unknown,
    email: string,
    group: string,
    { caller, accessRequired }: SignUpContext,
  ): Promise<{ origin: UserOrigin; invitation?: VerifiedInvitation }> {
    if (isAdmin(caller)) return { origin: 'admin' };
    if (!accessRequired || this.settings.signup === 'open') return { origin: 'signup' };
    if (invitation === undefined) {
      throw new ForbiddenError('Sign-up needs an invitation (hortus user invite) or an admin key');
    }
    const invited =
      typeof invitation === 'string' && invitation.length <= 2048
        ? await this.tokens.verifyInvitation(invitation)
        : undefined;
    if (invited === undefined || invited.email !== emailKey(email) || invited.group !== group) {
      throw new ForbiddenError('The invitation is not valid for this e-mail and group');
    }
    return { origin: 'invitation', invitation: invited };
  }
}
