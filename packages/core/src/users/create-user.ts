import { inject, injectable } from 'inversify';
import { requireText } from '../shared/validation.js';
import { requireEmail, type User } from './user.js';
import { USER_REPOSITORY, type UserRepository } from './user.port.js';

@injectable()
export class CreateUser {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  async execute(input: {
    firstName: unknown;
    lastName: unknown;
    email: unknown;
    group: unknown;
  }): Promise<User> {
    return this.users.create({
      firstName: requireText(input.firstName, 'firstName'),
      lastName: requireText(input.lastName, 'lastName'),
      email: requireEmail(input.email),
      group: requireText(input.group, 'group'),
    });
  }
}
