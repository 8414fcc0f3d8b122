import { InvalidInputError } from '../shared/errors.js';

/**
 * What a user may do (access-policy.ts): a viewer reads its group (and keeps its own account: charts,
 * e-mail, profile); an operator also switches, acknowledges and edits its group's rules, ranges and
 * settings (what every account of the original service could); an admin also manages boxes, users and keys,
 * and reaches every group.
 */
export const userRoles = ['viewer', 'operator', 'admin'] as const;
export type UserRole = (typeof userRoles)[number];

/** The role of an account stored without one: accounts of the original service, of sign-up, and older ones. */
export const DEFAULT_USER_ROLE: UserRole = 'operator';

/** A user as every route shows it: no password or hash is ever part of it. */
export interface User {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  /** The home group: the log-in answer names it, and a viewer or operator reaches only it. */
  readonly group: string;
  readonly role: UserRole;
}

/** A new user: without a role it is an operator (DEFAULT_USER_ROLE). */
export type NewUser = Omit<User, 'id' | 'role'> & { readonly role?: UserRole };

/**
 * How an account came to be, kept so an operator turning access control on can review the accounts
 * strangers may have made while the server was open: `signup` (anyone, while sign-up was open),
 * `invitation` (`hortus user invite`), `admin` (sign-up with an admin key), `cli` (`hortus user create`,
 * the demo), `migration` (`hortus migrate`).
 */
export const userOrigins = ['signup', 'invitation', 'admin', 'cli', 'migration'] as const;
export type UserOrigin = (typeof userOrigins)[number];

/** Where and when a new account comes from (see UserOrigin). */
export interface UserProvenance {
  readonly origin: UserOrigin;
  readonly createdAt: Date;
}

/** A user as the operator reviews them (`hortus user list`); never shown on a route. */
export interface UserRecord extends User {
  /** Undefined for records written before creation times were kept. */
  readonly createdAt?: Date;
  /** `unknown` for records written before origins were kept. */
  readonly origin: UserOrigin | 'unknown';
}

/** What the store keeps beside a user to let them log in; it never leaves the account use cases. */
export interface UserCredentials {
  /** A bcrypt hash; absent for users created without a password (they set one through a reset). */
  readonly passwordHash?: string;
  /** Tokens carry the version they were issued at; raising it ends every older token. */
  readonly sessionVersion: number;
  /** The pending password reset, stored only as a digest of its token. */
  readonly reset?: { readonly tokenDigest: string; readonly expiresAt: Date };
}

/** Everything a store keeps of one user: what `hortus store copy` reads and writes as it is. */
export type UserCopy = UserRecord & UserCredentials;

/**
 * A user moved over from another system (the original service): it keeps its id where the store can hold
 * it, so the ids clients and chart records hold stay valid, and its bcrypt hash, stored as the credential
 * log-in verifies (see UserCredentials), so the old password keeps working.
 */
export interface ImportedUser extends NewUser {
  readonly id?: string;
  /** When it was copied (its origin is `migration`); the store's own time when absent. */
  readonly createdAt?: Date;
  readonly passwordHash?: string;
  /**
   * The system it came from told e-mails apart by case, and another account has this e-mail in another
   * case: this one is kept as its own account, found by its e-mail exactly as written.
   */
  readonly caseSensitiveEmail?: boolean;
}

export function requireUserRole(value: unknown, field = 'role'): UserRole {
  if (typeof value === 'string' && (userRoles as readonly string[]).includes(value)) return value as UserRole;
  throw InvalidInputError.forField(field, `must be one of ${userRoles.join(', ')}`);
}

/**
 * The role a store read: absent is the default (operator); a value this version does not know (written by
 * a newer one) is the least, viewer, so an unknown role never grants more than reading.
 */
export function storedUserRole(value: unknown): UserRole {
  if (value === undefined || value === null) return DEFAULT_USER_ROLE;
  return typeof value === 'string' && (userRoles as readonly string[]).includes(value)
    ? (value as UserRole)
    : 'viewer';
}

export const EMAIL_MAX_LENGTH = 254;
const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/u;

export function requireEmail(value: unknown, field = 'email'): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw InvalidInputError.forField(field, 'is required');
  const email = value.trim();
  if (email.length > EMAIL_MAX_LENGTH || !emailPattern.test(email)) {
    throw InvalidInputError.forField(field, 'must be a valid e-mail address');
  }
  return email;
}

/**
 * The form e-mails are compared and kept unique in: `Ana@Example.org` and `ana@example.org` are one
 * address to a person, so they are one account. The e-mail itself is stored as the user wrote it.
 */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The unique key a stored account's e-mail is kept under: emailKey, or for a case-sensitive account
 * (ImportedUser.caseSensitiveEmail) the e-mail as written with a mark. An e-mail holds no space, so such
 * a key never meets a lower-case one, and the account never takes the e-mail of the one it differs from.
 */
export function storedEmailKey(email: string, caseSensitive = false): string {
  return caseSensitive ? `${email.trim()} (case-sensitive)` : emailKey(email);
}
