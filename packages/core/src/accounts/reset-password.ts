import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError } from '../shared/errors.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { COMMON_PASSWORDS, type CommonPasswords, INVALID_RESET_LINK, requirePassword } from './account.js';
import {
  ONE_TIME_TOKENS,
  type OneTimeTokens,
  PASSWORD_HASHER,
  type PasswordHasher,
} from './accounts.port.js';

const tokenPattern = /^[0-9a-f]{64}$/u;

@injectable()
export class ResetPassword {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(PASSWORD_HASHER) private readonly hasher: PasswordHasher,
    @inject(ONE_TIME_TOKENS) private readonly oneTime: OneTimeTokens,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(COMMON_PASSWORDS) private readonly commonPasswords: CommonPasswords,
  ) {}

  /**
   * Sets the password from a reset link: the token must be the user's newest, unused and under an hour old.
   * It is checked before the (slow) hash is made, and again atomically when the hash is stored, so two
   * uses of one link cannot both succeed. Every older session ends.
   */
  async execute(input: { _id: unknown; token: unknown; password: unknown }): Promise<void> {
    const password = requirePassword(input.password, 'password', 'new', this.commonPasswords);
    const invalid = new InvalidInputError(INVALID_RESET_LINK, [{ field: 'token', problem: 'is not valid' }]);
    if (typeof input._id !== 'string' || typeof input.token !== 'string' || !tokenPattern.test(input.token)) {
      throw invalid;
    }
    const tokenDigest = this.oneTime.digest(input.token);
    const now = this.clock.now();
    const reset = (await this.users.findCredentials(input._id))?.reset;
    if (reset === undefined || reset.tokenDigest !== tokenDigest || reset.expiresAt <= now) throw invalid;
    const passwordHash = await this.hasher.hash(password);
    const changed = await this.users.resetPassword(input._id, { tokenDigest, now, passwordHash });
    if (changed === undefined) throw invalid;
  }
}
