import { injectable } from 'inversify';
import { ConflictError, type NewUser, type User, type UserRepository } from '@hortus/core';
import { newId } from './ids.js';

interface StoredUser {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  email: string;
  readonly group: string;
}

function toUser(stored: StoredUser): User {
  return {
    id: stored.id,
    firstName: stored.firstName,
    lastName: stored.lastName,
    email: stored.email,
    group: stored.group,
  };
}

function emailTaken(email: string): ConflictError {
  return new ConflictError('user', `Another user has the e-mail ${email}`);
}

/** Users indexed by id, plus an e-mail index that keeps e-mails unique. */
@injectable()
export class InMemoryUserRepository implements UserRepository {
  private readonly byId = new Map<string, StoredUser>();
  private readonly idByEmail = new Map<string, string>();

  async create(user: NewUser): Promise<User> {
    if (this.idByEmail.has(user.email)) throw emailTaken(user.email);
    const stored: StoredUser = {
      id: newId(),
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      group: user.group,
    };
    this.byId.set(stored.id, stored);
    this.idByEmail.set(stored.email, stored.id);
    return toUser(stored);
  }

  async findById(id: string): Promise<User | undefined> {
    const stored = this.byId.get(id);
    return stored === undefined ? undefined : toUser(stored);
  }

  async changeEmail(id: string, email: string): Promise<User | undefined> {
    const stored = this.byId.get(id);
    if (stored === undefined) return undefined;
    const owner = this.idByEmail.get(email);
    if (owner !== undefined && owner !== id) throw emailTaken(email);
    this.idByEmail.delete(stored.email);
    stored.email = email;
    this.idByEmail.set(email, id);
    return toUser(stored);
  }
}
