import { injectable } from 'inversify';
import {
  ConflictError,
  emailKey,
  storedEmailKey,
  type ImportedUser,
  type NewUser,
  type PasswordResetChange,
  type User,
  type UserCredentials,
  type UserOrigin,
  type UserProvenance,
  type UserRecord,
  type UserCopy,
  type UserRepository,
  type UserRole,
  storedUserRole,
} from '@hortus/core';
import { newId } from './ids.js';

interface StoredUser {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  email: string;
  readonly group: string;
  /** Absent: the default role (an operator). */
  role?: UserRole;
  passwordHash?: string;
  sessionVersion: number;
  reset?: { readonly tokenDigest: string; readonly expiresAt: Date };
  readonly createdAt?: Date;
  readonly origin?: UserOrigin;
}

function toUser(stored: StoredUser): User {
  return {
    id: stored.id,
    firstName: stored.firstName,
    lastName: stored.lastName,
    email: stored.email,
    group: stored.group,
    role: storedUserRole(stored.role),
  };
}

function toCredentials(stored: StoredUser): UserCredentials {
  return {
    sessionVersion: stored.sessionVersion,
    ...(stored.passwordHash === undefined ? {} : { passwordHash: stored.passwordHash }),
    ...(stored.reset === undefined
      ? {}
      : { reset: { tokenDigest: stored.reset.tokenDigest, expiresAt: new Date(stored.reset.expiresAt) } }),
  };
}

/** The form of the ids this store issues (see newId): an imported id of that form is kept. */
const idPattern = /^[0-9a-f]{24}$/u;

function emailTaken(email: string): ConflictError {
  return new ConflictError('user', `Another user has the e-mail ${email}`);
}

/** Users indexed by id, plus an index of e-mails (ignoring case) that keeps them unique. */
@injectable()
export class InMemoryUserRepository implements UserRepository {
  private readonly byId = new Map<string, StoredUser>();
  /** By storedEmailKey: unique, as the stores' index. */
  private readonly idByEmail = new Map<string, string>();
  /** By the e-mail as written: found first, so a case-sensitive account logs in. */
  private readonly idByExactEmail = new Map<string, string>();
  private readonly keyById = new Map<string, string>();
  /** Used invitations by id, with their expiry. */
  private readonly usedInvitations = new Map<string, number>();

  async create(
    user: NewUser,
    options: { readonly passwordHash?: string; readonly provenance?: UserProvenance } = {},
  ): Promise<User> {
    return this.store(user, newId(), options.passwordHash, options.provenance);
  }

  async createImported(user: ImportedUser): Promise<User> {
    const { id, passwordHash, caseSensitiveEmail, createdAt, ...fields } = user;
    const keep = id !== undefined && idPattern.test(id) && !this.byId.has(id);
    return this.store(
      fields,
      keep ? id : newId(),
      passwordHash,
      { origin: 'migration', createdAt: createdAt ?? new Date() },
      storedEmailKey(fields.email, caseSensitiveEmail),
    );
  }

  async list(): Promise<UserRecord[]> {
    return [...this.byId.values()].map((stored) => ({
      ...toUser(stored),
      ...(stored.createdAt === undefined ? {} : { createdAt: new Date(stored.createdAt) }),
      origin: stored.origin ?? 'unknown',
    }));
  }

  private store(
    user: NewUser,
    id: string,
    passwordHash: string | undefined,
    provenance: UserProvenance | undefined,
    key = emailKey(user.email),
  ): User {
    if (this.idByEmail.has(key) || this.idByExactEmail.has(user.email)) throw emailTaken(user.email);
    const stored: StoredUser = {
      id,
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      group: user.group,
      ...(user.role === undefined ? {} : { role: user.role }),
      sessionVersion: 0,
      ...(passwordHash === undefined ? {} : { passwordHash }),
      ...(provenance === undefined
        ? {}
        : { origin: provenance.origin, createdAt: new Date(provenance.createdAt) }),
    };
    this.byId.set(stored.id, stored);
    this.index(stored.id, stored.email, key);
    return toUser(stored);
  }

  private index(id: string, email: string, key: string): void {
    this.idByEmail.set(key, id);
    this.idByExactEmail.set(email, id);
    this.keyById.set(id, key);
  }

  private unindex(id: string, email: string): void {
    this.idByEmail.delete(this.keyById.get(id) ?? emailKey(email));
    this.idByExactEmail.delete(email);
    this.keyById.delete(id);
  }

  async findById(id: string): Promise<User | undefined> {
    const stored = this.byId.get(id);
    return stored === undefined ? undefined : toUser(stored);
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const id = this.idByExactEmail.get(email.trim()) ?? this.idByEmail.get(emailKey(email));
    return id === undefined ? undefined : this.findById(id);
  }

  async changeEmail(id: string, email: string): Promise<User | undefined> {
    const stored = this.byId.get(id);
    if (stored === undefined) return undefined;
    const owner = this.idByEmail.get(emailKey(email)) ?? this.idByExactEmail.get(email);
    if (owner !== undefined && owner !== id) throw emailTaken(email);
    this.unindex(id, stored.email);
    stored.email = email;
    delete stored.reset;
    this.index(id, email, emailKey(email));
    return toUser(stored);
  }

  async restore(user: UserCopy): Promise<void> {
    const owner = this.idByEmail.get(emailKey(user.email)) ?? this.idByExactEmail.get(user.email);
    if (owner !== undefined && owner !== user.id) throw emailTaken(user.email);
    const previous = this.byId.get(user.id);
    if (previous !== undefined) this.unindex(user.id, previous.email);
    const stored: StoredUser = {
      id: user.id,
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      group: user.group,
      role: user.role,
      sessionVersion: user.sessionVersion,
      ...(user.passwordHash === undefined ? {} : { passwordHash: user.passwordHash }),
      ...(user.reset === undefined
        ? {}
        : { reset: { tokenDigest: user.reset.tokenDigest, expiresAt: new Date(user.reset.expiresAt) } }),
      ...(user.createdAt === undefined ? {} : { createdAt: new Date(user.createdAt) }),
      ...(user.origin === 'unknown' ? {} : { origin: user.origin }),
    };
    this.byId.set(stored.id, stored);
    this.index(stored.id, stored.email, emailKey(stored.email));
  }

  async findCredentials(id: string): Promise<UserCredentials | undefined> {
    const stored = this.byId.get(id);
    return stored === undefined ? undefined : toCredentials(stored);
  }

  async setPassword(
    id: string,
    passwordHash: string,
    options: { readonly endSessions: boolean; readonly ifHashIs?: string },
  ): Promise<number | undefined> {
    const stored = this.byId.get(id);
    if (stored === undefined) return undefined;
    if (options.ifHashIs !== undefined && stored.passwordHash !== options.ifHashIs) return undefined;
    stored.passwordHash = passwordHash;
    delete stored.reset;
    if (options.endSessions) stored.sessionVersion += 1;
    return stored.sessionVersion;
  }

  async endSessions(id: string): Promise<number | undefined> {
    const stored = this.byId.get(id);
    if (stored === undefined) return undefined;
    stored.sessionVersion += 1;
    return stored.sessionVersion;
  }

  async setResetToken(id: string, tokenDigest: string, expiresAt: Date): Promise<boolean> {
    const stored = this.byId.get(id);
    if (stored === undefined) return false;
    stored.reset = { tokenDigest, expiresAt: new Date(expiresAt) };
    return true;
  }

  async resetPassword(id: string, change: PasswordResetChange): Promise<number | undefined> {
    const stored = this.byId.get(id);
    const reset = stored?.reset;
    if (
      stored === undefined ||
      reset === undefined ||
      reset.tokenDigest !== change.tokenDigest ||
      reset.expiresAt.getTime() <= change.now.getTime()
    ) {
      return undefined;
    }
    delete stored.reset;
    stored.passwordHash = change.passwordHash;
    stored.sessionVersion += 1;
    return stored.sessionVersion;
  }

  async useInvitation(id: string, expiresAt: Date, now: Date): Promise<boolean> {
    for (const [used, expiry] of this.usedInvitations) {
      if (expiry <= now.getTime()) this.usedInvitations.delete(used);
    }
    if (this.usedInvitations.has(id)) return false;
    this.usedInvitations.set(id, expiresAt.getTime());
    return true;
  }

  async setRole(id: string, role: UserRole): Promise<User | undefined> {
    const stored = this.byId.get(id);
    if (stored === undefined) return undefined;
    stored.role = role;
    return toUser(stored);
  }

  async delete(id: string): Promise<boolean> {
    const stored = this.byId.get(id);
    if (stored === undefined) return false;
    this.byId.delete(id);
    this.unindex(id, stored.email);
    return true;
  }
}
