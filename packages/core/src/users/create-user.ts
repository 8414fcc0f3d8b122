import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { COMMON_PASSWORDS, type CommonPasswords, requirePassword } from '../accounts/account.js';
import { PASSWORD_HASHER, type PasswordHasher } from '../accounts/accounts.port.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { requireText } from '../shared/validation.js';
import { requireEmail, requireUserRole, type User, type UserProvenance } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

/**
 * An administrator creates a user (`hortus user create`), with a password or without (set by a reset), and
 * a role (an operator unless said).
 */
@injectable()
export class CreateUser {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(PASSWORD_HASHER) private readonly hasher: PasswordHasher,
    @inject(COMMON_PASSWORDS) private readonly commonPasswords: CommonPasswords,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
  ) {}

  async execute(input: {
    firstName: unknown;
    lastName: unknown;
    email: unknown;
    group: unknown;
    password?: unknown;
    /** Without one, an operator (DEFAULT_USER_ROLE). */
    role?: unknown;
    actor?: Actor;
  }): Promise<User> {
    const user = {
      firstName: requireText(input.firstName, 'firstName'),
      lastName: requireText(input.lastName, 'lastName'),
      email: requireEmail(input.email),
      group: requireText(input.group, 'group'),
      ...(input.role === undefined ? {} : { role: requireUserRole(input.role) }),
    };
    const passwordHash =
      input.password === undefined
        ? undefined
        : await this.hasher.hash(requirePassword(input.password, 'password', 'new', this.commonPasswords));
    const created = await this.users.create(user, {
      ...(passwordHash === undefined ? {} : { passwordHash }),
      provenance: this.provenance(),
    });
    await this.audit.execute(input.actor, {
      action: 'user.create',
      target: created.email,
      group: created.group,
      after: { email: created.email, group: created.group, role: created.role },
    });
    return created;
  }

  private provenance(): UserProvenance {
    return { origin: 'cli', createdAt: this.clock.now() };
  }
}
