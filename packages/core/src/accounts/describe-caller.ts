import { inject, injectable } from 'inversify';
import { grantOfKey } from '../access-keys/access-policy.js';
import { type AccessKeyKind } from '../access-keys/access-key.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { UnauthenticatedError } from '../shared/errors.js';
import { type UserRole } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type Caller } from './account.js';

/** Who a request's credential belongs to, and what it reaches (`GET /api/me`). */
export type CallerDescription =
  | {
      readonly kind: 'user';
      readonly userId: string;
      readonly email: string;
      readonly firstName: string;
      readonly lastName: string;
      /** The home group: the log-in answer's. */
      readonly group: string;
      readonly role: UserRole;
      /** The groups it may see: its home group, or every group for an admin. */
      readonly groups: readonly string[];
    }
  | {
      readonly kind: 'key';
      readonly keyId: string;
      readonly name: string;
      readonly keyKind: AccessKeyKind;
      readonly role: string;
      /** The groups it may see (every group when it is not limited; none for a metrics key). */
      readonly groups: readonly string[];
    };

/** Answers the signed-in caller as a web page needs it to show what it may do. */
@injectable()
export class DescribeCaller {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(GROUP_REPOSITORY) private readonly groupRepository: GroupRepository,
  ) {}

  async execute(caller: Caller): Promise<CallerDescription> {
    if (caller.kind === 'key') {
      const grant = grantOfKey(caller.key);
      return {
        kind: 'key',
        keyId: caller.key.id,
        name: caller.key.name,
        keyKind: caller.key.kind,
        role: grant.role,
        groups:
          grant.role === 'metrics' ? [] : grant.groups === 'all' ? await this.allGroups() : grant.groups,
      };
    }
    const user = caller.kind === 'user' ? await this.users.findById(caller.userId) : undefined;
    if (user === undefined) {
      throw new UnauthenticatedError(
        'Log in first: send the header Authorization: Bearer <token>',
        caller.kind === 'anonymous' && caller.rejectedCredential === true,
      );
    }
    return {
      kind: 'user',
      userId: user.id,
      email: user.email,
      firstName: user.firstName,
      lastName: user.lastName,
      group: user.group,
      role: user.role,
      groups: user.role === 'admin' ? await this.allGroups(user.group) : [user.group],
    };
  }

  /** Every group's name, sorted; an admin's home group is one of them even before it has a record. */
  private async allGroups(home?: string): Promise<string[]> {
    const names = (await this.groupRepository.list()).map((group) => group.name);
    return [...new Set(home === undefined ? names : [...names, home])].sort();
  }
}
