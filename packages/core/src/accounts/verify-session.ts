import { inject, injectable } from 'inversify';
import { type UserRole } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type SessionClaims } from './account.js';
import { TOKEN_SERVICE, type TokenService } from './accounts.port.js';

/** Longest text taken for a token; ours are far shorter. Longer text is refused before it is parsed. */
export const TOKEN_MAX_LENGTH = 2048;

@injectable()
export class VerifySession {
  constructor(
    @inject(TOKEN_SERVICE) private readonly tokens: TokenService,
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
  ) {}

  /**
   * The session of a log-in token: signed here, unexpired, of a user who still exists, at the user's
   * current session version. Its group and role are the user's stored ones (a change applies to tokens
   * issued before it). Undefined for anything else.
   */
  async execute(token: string): Promise<(SessionClaims & { readonly role: UserRole }) | undefined> {
    if (token.length > TOKEN_MAX_LENGTH) return undefined;
    const claims = await this.tokens.verifySession(token);
    if (claims === undefined) return undefined;
    const [user, credentials] = await Promise.all([
      this.users.findById(claims.userId),
      this.users.findCredentials(claims.userId),
    ]);
    if (user === undefined || credentials?.sessionVersion !== claims.sessionVersion) return undefined;
    return { ...claims, group: user.group, role: user.role };
  }
}
