import { inject, injectable } from 'inversify';
import { type UserRecord } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

/**
 * Every account with how and when it was made (`hortus user list`): the review an operator does before
 * turning access control on, since accounts strangers made while the server was open keep their access.
 */
@injectable()
export class ListUsers {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  execute(): Promise<UserRecord[]> {
    return this.users.list();
  }
}
