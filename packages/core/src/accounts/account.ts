import { type AccessKey } from '../access-keys/access-key.js';
import { InvalidInputError } from '../shared/errors.js';
import { type UserRole } from '../users/user.js';

/**
 * NIST SP 800-63B: 8 to 128 characters, no composition rules (they push people to `Password1!`), and not
 * one of the most common passwords. The original's users keep their passwords: log-in checks only the
 * length bounds of what may be sent.
 */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;
/** The most a password of PASSWORD_MAX_LENGTH characters can take in UTF-8. */
export const PASSWORD_MAX_BYTES = 4 * PASSWORD_MAX_LENGTH;

/** The log-in answer for an unknown e-mail and a wrong password alike (COMPAT). */
export const INVALID_CREDENTIALS = 'Invalid Email or Password';
export const EMAIL_TAKEN = 'User with given email already exists!';
export const INVALID_GROUP = 'Invalid group name';
export const INVALID_RESET_LINK = 'Invalid link or expired';

/** Passwords too common to protect anything (a maintained list, bundled by the identity adapter). */
export interface CommonPasswords {
  includes(password: string): boolean;
}

export const COMMON_PASSWORDS = Symbol.for('hortus.CommonPasswords');

/**
 * Checks the password policy; the message names the rule that failed. Only the bounds of what may be sent
 * are checked for `current` passwords (log-in): a password set before the policy (an imported database)
 * must still be accepted there.
 */
export function requirePassword(
  value: unknown,
  field = 'password',
  policy: 'new' | 'current' = 'new',
  common?: CommonPasswords,
): string {
  if (typeof value !== 'string' || value === '') throw InvalidInputError.forField(field, 'is required');
  const length = [...value].length;
  if (length > PASSWORD_MAX_LENGTH) {
    throw InvalidInputError.forField(field, `must be at most ${PASSWORD_MAX_LENGTH} characters`);
  }
  if (policy === 'current') return value;
  if (length < PASSWORD_MIN_LENGTH) {
    throw InvalidInputError.forField(field, `must be at least ${PASSWORD_MIN_LENGTH} characters`);
  }
  if (common?.includes(value) === true) {
    throw InvalidInputError.forField(field, 'is one of the most common passwords: choose another');
  }
  return value;
}

/** Who makes a request, as the transport established it. */
export type Caller =
  /** No credential, or (`rejectedCredential`) one that was refused. */
  | { readonly kind: 'anonymous'; readonly rejectedCredential?: boolean }
  | { readonly kind: 'key'; readonly key: AccessKey }
  /** A log-in token: the user's own id, home group and role. */
  | { readonly kind: 'user'; readonly userId: string; readonly group: string; readonly role: UserRole }
  /** The administrator at the server's console (the CLI), who may do what an admin key may. */
  | { readonly kind: 'operator' };

export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });
export const OPERATOR: Caller = Object.freeze({ kind: 'operator' });

/** The console, an admin key, or an admin's log-in token. */
export function isAdmin(caller: Caller): boolean {
  return (
    caller.kind === 'operator' ||
    (caller.kind === 'key' && caller.key.kind === 'admin') ||
    (caller.kind === 'user' && caller.role === 'admin')
  );
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

/** An invitation whose code verified: `id` names it (one id per issued invitation) for its single use. */
export interface VerifiedInvitation extends Invitation {
  /** Derived from the signed claims, never from the code's text, so no re-encoding of a code is new. */
  readonly id: string;
  readonly expiresAt: Date;
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
  /**
   * Sign-ups (each one a bcrypt hash) allowed per client address, and from all addresses together, within
   * the window before 429: a burst of strangers cannot take the CPU log-ins need. Admins are not counted.
   * 0: no limit.
   */
  readonly maxSignupsPerAddress: number;
  readonly maxSignups: number;
  readonly signupWindowMs: number;
}

export const defaultAccountSettings: AccountSettings = {
  appUrl: 'http://localhost:3000',
  signup: 'invite',
  resetTokenTtlMs: 3_600_000,
  maxFailedLogins: 10,
  failedLoginWindowMs: 15 * 60_000,
  maxSignupsPerAddress: 10,
  maxSignups: 100,
  signupWindowMs: 15 * 60_000,
};

export const ACCOUNT_SETTINGS = Symbol.for('hortus.AccountSettings');

export function resetLink(appUrl: string, userId: string, token: string): string {
  return `${appUrl.replace(/\/+$/u, '')}/reset_password/${encodeURIComponent(userId)}/${token}`;
}
