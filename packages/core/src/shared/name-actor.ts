import { inject, injectable } from 'inversify';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { type Actor } from './actor.js';

/**
 * Adds what a person reads to an actor the transport named by id only: a user's e-mail (as it is at that
 * moment, so a record keeps it after the user changes it). Records that name an actor for people (the
 * audit trail, acknowledgements) go through it; a failed look-up leaves the actor as it is.
 */
@injectable()
export class NameActor {
  constructor(@inject(USER_REPOSITORY) private readonly users: UserRepository) {}

  async execute(actor: Actor): Promise<Actor> {
    if (actor.kind !== 'user' || actor.id === undefined || actor.name !== undefined) return actor;
    const user = await this.users.findById(actor.id).catch(() => undefined);
    return user === undefined ? actor : { ...actor, name: user.email };
  }
}
