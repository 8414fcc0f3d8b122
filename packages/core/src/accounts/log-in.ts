import { inject, injectable } from 'inversify';
import { InvalidInputError, UnauthenticatedError } from '../shared/errors.js';
import { emailKey, EMAIL_MAX_LENGTH } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { INVALID_CREDENTIALS, requirePassword } from './account.js';
import { PASSWORD_HASHER, type PasswordHasher, TOKEN_SERVICE, type TokenService } from './accounts.port.js';
import { LoginThrottle } from './login-throttle.js';

export interface LoggedIn {
  readonly token: string;
  readonly userId: string;
  readonly group: string;
}

@injectable()
export class LogIn {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(PASSWORD_HASHER) private readonly hasher: PasswordHasher,
    @inject(TOKEN_SERVICE) private readonly tokens: TokenService,
    @inject(LoginThrottle) private readonly throttle: LoginThrottle,
  ) {}

  /**
   * An unknown e-mail, a user without a password and a wrong password all get the same error after the
   * same work (one bcrypt verification), so the answer does not tell which e-mails have accounts. A hash
   * weaker than new ones is replaced while the password is at hand.
   */
  async execute(input: { email: unknown; password: unknown }, clientAddress: string): Promise<LoggedIn> {
    if (typeof input.email !== 'string' || input.email.trim() === '') {
      throw InvalidInputError.forField('email', 'is required');
    }
    if (input.email.length > EMAIL_MAX_LENGTH) {
      throw InvalidInputError.forField('email', `must be at most ${EMAIL_MAX_LENGTH} characters`);
    }
    const password = requirePassword(input.password, 'password', 'current');
    const attempt = await this.throttle.begin({ email: emailKey(input.email), address: clientAddress });
    const user = await this.users.findByEmail(input.email);
    const credentials = user === undefined ? undefined : await this.users.findCredentials(user.id);
    const hash = credentials?.passwordHash;
    const matches = await this.hasher.verify(password, hash ?? this.hasher.dummyHash);
    if (user === undefined || credentials === undefined || hash === undefined || !matches) {
      await attempt.failed();
      throw new UnauthenticatedError(INVALID_CREDENTIALS, true);
    }
    await attempt.succeeded();
    if (this.hasher.needsRehash(hash)) {
      const stronger = await this.hasher.hash(password);
      await this.users.setPassword(user.id, stronger, { endSessions: false, ifHashIs: hash });
    }
    const token = await this.tokens.issueSession({
      userId: user.id,
      group: user.group,
      sessionVersion: credentials.sessionVersion,
    });
    return { token, userId: user.id, group: user.group };
  }
}
