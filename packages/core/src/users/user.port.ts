import {
  type UserCopy,
  type ImportedUser,
  type NewUser,
  type User,
  type UserCredentials,
  type UserProvenance,
  type UserRecord,
  type UserRole,
} from './user.js';

/** A reset-token change that applies only while the stored token matches and has not expired. */
export interface PasswordResetChange {
  /** Digest of the token the caller presented (OneTimeTokens.digest). */
  readonly tokenDigest: string;
  readonly now: Date;
  /** The new bcrypt hash. */
  readonly passwordHash: string;
}

/**
 * Users and their credentials. A password hash goes in through `create`/`createImported`/`setPassword`/`resetPassword` and
 * comes out only through `findCredentials`, which only the account use cases call (to hand it to the
 * PasswordHasher); every other method answers the public User.
 */
export interface UserRepository {
  /**
   * Throws ConflictError when another user has that e-mail (compared case-insensitively). The provenance
   * is kept for `list`; without it the user is listed with origin `unknown` and no creation time.
   */
  create(
    user: NewUser,
    options?: { readonly passwordHash?: string; readonly provenance?: UserProvenance },
  ): Promise<User>;
  /**
   * Stores a user moved from another system. Keeps `id` when it has the form of the ids this store issues
   * and no user has it, and issues a new one otherwise. The hash is stored as `create` stores one (read
   * back only by findCredentials), at session version 0. Throws ConflictError when another user has that
   * e-mail (ignoring case, unless `caseSensitiveEmail`: then only exactly that e-mail). It is listed with
   * origin `migration`.
   */
  createImported(user: ImportedUser): Promise<User>;
  /**
   * Stores a user copied from another store of this service as it is (`hortus store copy`): id, e-mail,
   * hash, session version, pending reset, creation time and origin, replacing the user with that id, so
   * copying it again changes nothing. Throws ConflictError when another user has that e-mail.
   */
  restore(user: UserCopy): Promise<void>;
  /** Every user with how and when it was made, in the order they were stored (`hortus user list`). */
  list(): Promise<UserRecord[]>;
  /** Any id the store cannot have issued (malformed, unknown) is simply not found. */
  findById(id: string): Promise<User | undefined>;
  /**
   * The user whose e-mail is exactly this one, else the one whose e-mail equals it ignoring case (never a
   * case-sensitive account: see ImportedUser.caseSensitiveEmail).
   */
  findByEmail(email: string): Promise<User | undefined>;
  /**
   * Undefined when no such user; ConflictError when another user has that e-mail (ignoring case). A pending
   * reset token is removed: it was sent to the old address.
   */
  changeEmail(id: string, email: string): Promise<User | undefined>;
  /** Undefined when no such user. A user created without a password has a session version but no hash. */
  findCredentials(id: string): Promise<UserCredentials | undefined>;
  /**
   * Stores a new hash; with `endSessions` the session version goes up by one (every older token ends).
   * With `ifHashIs`, only while the stored hash is still that one (a rehash must not undo a change made
   * meanwhile). A pending reset token is removed (it would undo the password just set). Answers the
   * session version after the change, or undefined when nothing changed.
   */
  setPassword(
    id: string,
    passwordHash: string,
    options: { readonly endSessions: boolean; readonly ifHashIs?: string },
  ): Promise<number | undefined>;
  /** Raises the session version by one; answers it, or undefined when no such user. */
  endSessions(id: string): Promise<number | undefined>;
  /** Keeps one reset token per user (a newer one replaces it); false when no such user. */
  setResetToken(id: string, tokenDigest: string, expiresAt: Date): Promise<boolean>;
  /**
   * In one step, and only while the stored reset token has this digest and expires after `now`: sets the
   * hash, removes the token (single use) and raises the session version. Answers the new version, or
   * undefined when the token did not match (nothing changed).
   */
  resetPassword(id: string, change: PasswordResetChange): Promise<number | undefined>;
  /**
   * Marks an invitation (VerifiedInvitation.id) used, in one step: true for the one call that used it,
   * false when it had been used already. The mark is kept until the invitation expires; marks expired by
   * `now` may be removed.
   */
  useInvitation(id: string, expiresAt: Date, now: Date): Promise<boolean>;
  /** Sets the user's role (its sessions keep going, with the new role); undefined when no such user. */
  setRole(id: string, role: UserRole): Promise<User | undefined>;
  /** Removes the user and their credentials; false when no such user. */
  delete(id: string): Promise<boolean>;
}

export const USER_REPOSITORY = Symbol.for('hortus.UserRepository');
