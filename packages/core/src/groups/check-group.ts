import { inject, injectable } from 'inversify';
import { ACCOUNT_SETTINGS, type AccountSettings, type Caller } from '../accounts/account.js';
import { decideAccess } from '../access-keys/access-policy.js';
import { ForbiddenError, UnauthenticatedError } from '../shared/errors.js';
import { GROUP_REPOSITORY, type GroupRepository } from './group.port.js';

/** Who asks, and whether the server requires credentials right now (the transport knows). */
export interface CheckGroupContext {
  readonly caller: Caller;
  readonly accessRequired: boolean;
}

const OPEN: CheckGroupContext = { caller: { kind: 'operator' }, accessRequired: false };

@injectable()
export class CheckGroup {
  constructor(
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(ACCOUNT_SETTINGS) private readonly accounts: AccountSettings,
  ) {}

  /**
   * Anything that is not a usable name is simply a group that does not exist. While credentials are
   * required, a caller who may read the group gets the answer, and so does anyone while sign-up is open:
   * the web client's sign-up form asks before it signs up (without credentials), and sign-up itself would
   * tell the same ("Invalid group name").
   */
  async execute(input: { name: unknown }, context: CheckGroupContext = OPEN): Promise<boolean> {
    if (context.accessRequired && this.accounts.signup !== 'open')
      this.requireReader(input.name, context.caller);
    if (typeof input.name !== 'string' || input.name.trim() === '') return false;
    return (await this.groups.findByName(input.name.trim())) !== undefined;
  }

  private requireReader(group: unknown, caller: Caller): void {
    switch (caller.kind) {
      case 'operator':
        return;
      case 'anonymous':
        throw new UnauthenticatedError(
          'An access key is required: send the header Authorization: Bearer <key>',
          caller.rejectedCredential === true,
        );
      case 'user':
        if (caller.group !== group) throw new ForbiddenError('This log-in token may not reach this group');
        return;
      case 'key': {
        const decision = decideAccess(caller.key, 'read', { groups: [group] });
        if (!decision.allowed) throw new ForbiddenError(decision.reason);
      }
    }
  }
}
