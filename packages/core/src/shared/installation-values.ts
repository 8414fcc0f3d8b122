import { inject, injectable } from 'inversify';
import { SERVER_SECRET_REPOSITORY, type ServerSecretRepository } from '../accounts/accounts.port.js';

/**
 * Values an installation (every server on one store) makes once and then shares, kept in the store beside
 * the server's secrets: the installation's id, the name of its MQTT shared subscription. The first server
 * to ask stores its candidate; every later call, by any server of the installation, answers that one.
 */
@injectable()
export class InstallationValues {
  constructor(@inject(SERVER_SECRET_REPOSITORY) private readonly values: ServerSecretRepository) {}

  /** The prefix keeps these apart from the server secrets (a signing key must never be answered here). */
  valueOf(name: string, candidate: string): Promise<string> {
    return this.values.findOrCreate(`installation.${name}`, candidate);
  }
}
