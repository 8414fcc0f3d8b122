import { type NewUser, type User } from './user.js';

export interface UserRepository {
  /** Throws ConflictError when another user has that e-mail. */
  create(user: NewUser): Promise<User>;
  /** Any id the store cannot have issued (malformed, unknown) is simply not found. */
  findById(id: string): Promise<User | undefined>;
  /** Undefined when no such user; ConflictError when another user has that e-mail. */
  changeEmail(id: string, email: string): Promise<User | undefined>;
}

export const USER_REPOSITORY = Symbol.for('hortus.UserRepository');
