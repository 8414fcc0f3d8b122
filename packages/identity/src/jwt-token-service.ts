import { createHash, randomBytes } from 'node:crypto';
import {
  CLOCK,
  type Clock,
  type Invitation,
  SERVER_SECRET_REPOSITORY,
  type ServerSecretRepository,
  type SessionClaims,
  type TokenService,
  type VerifiedInvitation,
} from '@hortus/core';
import { inject, injectable } from 'inversify';
// `import type`: erased, so jose loads only with the first token (see loadJose).
import type * as Jose from 'jose';
import type { JWTPayload } from 'jose';

export const SESSION_TTL_SECONDS = 7 * 24 * 3600;
export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** The name under which a generated signing secret is kept in the store. */
export const SIGNING_SECRET_NAME = 'token-signing-key';
/** AUTH_SECRET must carry at least 256 bits when written as text. */
export const MIN_AUTH_SECRET_LENGTH = 32;

export interface TokenSettings {
  /** AUTH_SECRET; without it a secret is generated once and kept in the store, so restarts keep sessions. */
  readonly secret?: string;
}

export const TOKEN_SETTINGS = Symbol.for('hortus.identity.TokenSettings');

const ISSUER = 'hortus';
/** Each kind of token is valid only as that kind: an invitation is no session and the reverse. */
const SESSION_AUDIENCE = 'hortus-session';
const INVITATION_AUDIENCE = 'hortus-invitation';
const algorithms = ['HS256'];

/** jose is loaded with the first token signed or checked: most CLI commands handle none. */
let jose: Promise<typeof Jose> | undefined;
const loadJose = (): Promise<typeof Jose> => (jose ??= import('jose'));

/** Signed JWTs (HS256, jose): sessions hold `sub` = user id, `group` and the session version `sv`. */
@injectable()
export class JwtTokenService implements TokenService {
  private key: Promise<Uint8Array> | undefined;

  constructor(
    @inject(TOKEN_SETTINGS) private readonly settings: TokenSettings,
    @inject(SERVER_SECRET_REPOSITORY) private readonly secrets: ServerSecretRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async issueSession(claims: SessionClaims): Promise<string> {
    return this.sign(
      { group: claims.group, sv: claims.sessionVersion },
      claims.userId,
      SESSION_AUDIENCE,
      SESSION_TTL_SECONDS,
    );
  }

  async verifySession(token: string): Promise<SessionClaims | undefined> {
    const payload = await this.verify(token, SESSION_AUDIENCE);
    const { sub, group, sv } = payload ?? {};
    if (
      typeof sub !== 'string' ||
      typeof group !== 'string' ||
      typeof sv !== 'number' ||
      !Number.isInteger(sv)
    ) {
      return undefined;
    }
    return { userId: sub, group, sessionVersion: sv };
  }

  async issueInvitation(invitation: Invitation): Promise<string> {
    return this.sign(
      { group: invitation.group },
      invitation.email,
      INVITATION_AUDIENCE,
      INVITATION_TTL_SECONDS,
    );
  }

  async verifyInvitation(token: string): Promise<VerifiedInvitation | undefined> {
    const payload = await this.verify(token, INVITATION_AUDIENCE);
    const { sub, group, iat, exp } = payload ?? {};
    if (typeof sub !== 'string' || typeof group !== 'string') return undefined;
    if (typeof iat !== 'number' || typeof exp !== 'number') return undefined;
    // Two invitations for one e-mail and group in one second are one invitation: that is harmless.
    const id = createHash('sha256')
      .update(JSON.stringify([sub, group, iat]))
      .digest('hex');
    return { email: sub, group, id, expiresAt: new Date(exp * 1000) };
  }

  private async sign(
    claims: JWTPayload,
    subject: string,
    audience: string,
    ttlSeconds: number,
  ): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const { SignJWT } = await loadJose();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(await this.signingKey());
  }

  /** The payload of a valid token of that kind; undefined for malformed, forged, expired or other tokens. */
  private async verify(token: string, audience: string): Promise<JWTPayload | undefined> {
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, await this.signingKey(), {
        algorithms,
        issuer: ISSUER,
        audience,
        currentDate: this.clock.now(),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      return payload;
    } catch {
      return undefined;
    }
  }

  private signingKey(): Promise<Uint8Array> {
    this.key ??= (async () => {
      const secret =
        this.settings.secret ??
        (await this.secrets.findOrCreate(SIGNING_SECRET_NAME, randomBytes(32).toString('base64url')));
      return new TextEncoder().encode(secret);
    })();
    // A store that did not answer must not leave the server without tokens for good: try again next time.
    this.key.catch(() => {
      this.key = undefined;
    });
    return this.key;
  }
}
