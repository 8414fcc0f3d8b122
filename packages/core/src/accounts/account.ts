import { type AccessKey } from '../access-keys/access-key.js';
import { InvalidInputError } from '../shared/errors.js';

/** bcrypt reads at most 72 bytes of a password; longer ones would be cut silently, so they are refused. */
export const PASSWORD_MAX_BYTES = 72;
/** COMPAT: 8 to 26 characters with a lower-case letter, an upper-case letter, a digit and a symbol. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 26;

/** The log-in answer for an unknown e-mail and a wrong password alike (COMPAT). */
export const INVALID_CREDENTIALS = 'Invalid Email or Password';
export const EMAIL_TAKEN = 'User with given email already exists!';
export const INVALID_GROUP = 'Invalid group name';
export const INVALID_RESET_LINK = 'Invalid link or expired';

/**
 * Checks the password policy. Only the length is checked for `current` passwords (log-in): a password set
 * before the policy (an imported database) must still be accepted there.
 */
export function requirePassword(
  value: unknown,
  field = 'password',
  policy: 'new' | 'current' = 'new',
): string {
  if (typeof value !== 'string' || value === '') throw InvalidInputError.forField(field, 'is required');
  if (new TextEncoder().encode(value).length > PASSWORD_MAX_BYTES) {
    throw InvalidInputError.forField(field, `must be at most ${PASSWORD_MAX_BYTES} bytes`);
  }
  if (policy === 'current') return value;
  const length = [...value].length;
  const complex =
    /\p{Ll}/u.test(value) &&
    /\p{Lu}/u.test(value) &&
    /\p{Nd}/u.test(value) &&
    /[^\p{L}\p{Nd}\s]/u.test(value);
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH || !complex) {
    throw InvalidInputError.forField(
      field,
      `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters with a lower-case letter, an upper-case letter, a digit and a symbol`,
    );
  }
  return value;
}

/** Who makes a request, as the transport established it. */
export type Caller =
  /** No credential, or (`rejectedCredential`) one that was refused. */
  | { readonly kind: 'anonymous'; readonly rejectedCredential?: boolean }
  | { readonly kind: 'key'; readonly key: AccessKey }
  /** A log-in token: the user's own id and group. */
  | { readonly kind: 'user'; readonly userId: string; readonly group: string }
  /** The administrator at the server's console (the CLI), who may do what an admin key may. */
  | { readonly kind: 'operator' };

export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });
export const OPERATOR: Caller = Object.freeze({ kind: 'operator' });

export function isAdmin(caller: Caller): boolean {
  return caller.kind === 'operator' || (caller.kind === 'key' && caller.key.kind === 'admin');
}

/** What a log-in token says, signed by the TokenService. */
export interface SessionClaims {
  readonly userId: string;
  readonly group: string;
  readonly sessionVersion: number;
}

/** An invitation to sign up: only this e-mail (compared as emailKey) may join only this group. */
export interface Invitation {
  readonly email: string;
  readonly group: string;
}

export const signupModes = ['open', 'invite'] as const;
export type SignupMode = (typeof signupModes)[number];

export interface AccountSettings {
  /** The web client's address; reset links point there (`<appUrl>/reset_password/<userId>/<token>`). */
  readonly appUrl: string;
  /**
   * `invite`: while access keys are required, sign-up needs an admin key or an invitation. `open`: anyone
   * may sign up (as always while access keys are off).
   */
  readonly signup: SignupMode;
  readonly resetTokenTtlMs: number;
  /** Failed log-ins allowed per e-mail and per client address within the window before 429. */
  readonly maxFailedLogins: number;
  readonly failedLoginWindowMs: number;
}

export const defaultAccountSettings: AccountSettings = {
  appUrl: 'http://localhost:3000',
  signup: 'invite',
  resetTokenTtlMs: 3_600_000,
  maxFailedLogins: 10,
  failedLoginWindowMs: 15 * 60_000,
};

export const ACCOUNT_SETTINGS = Symbol.for('hortus.AccountSettings');

export function resetLink(appUrl: string, userId: string, token: string): string {
  return `${appUrl.replace(/\/+$/u, '')}/reset_password/${encodeURIComponent(userId)}/${token}`;
}
