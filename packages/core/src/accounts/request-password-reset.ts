import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { requireEmail, type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { ACCOUNT_SETTINGS, type AccountSettings, resetLink } from './account.js';
import { MAILER, type Mailer, ONE_TIME_TOKENS, type OneTimeTokens } from './accounts.port.js';

export const RESET_REQUESTED =
  'If an account has this e-mail, a link to reset its password has been sent to it.';
export const RESET_MAIL_SUBJECT = 'Reset your Hortus password';

@injectable()
export class RequestPasswordReset {
  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(ONE_TIME_TOKENS) private readonly oneTime: OneTimeTokens,
    @inject(MAILER) private readonly mailer: Mailer,
    @inject(ACCOUNT_SETTINGS) private readonly settings: AccountSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Mails a reset link when the e-mail has an account with a password, and answers the same either way,
   * so the route does not tell who has an account. The mail is handed over without waiting: a slow SMTP
   * server must not show in the answer's timing. The mailer reports its own failures.
   *
   * An account without a password gets no link here: anyone may change its e-mail (SPEC's route needs no
   * credential for it), so a link to whatever address it has now would hand the account to whoever set
   * that address. Its first password comes from the operator (`hortus user set-password` or `reset-link`).
   */
  async execute(input: { email: unknown }): Promise<string> {
    const email = requireEmail(input.email);
    const user = await this.users.findByEmail(email);
    const credentials = user === undefined ? undefined : await this.users.findCredentials(user.id);
    if (user !== undefined && credentials?.passwordHash !== undefined) {
      const link = await this.newLink(user);
      this.mailer
        .send({
          to: user.email,
          subject: RESET_MAIL_SUBJECT,
          text: [
            `Hello ${user.firstName},`,
            '',
            'someone (hopefully you) asked to reset the password of your Hortus account.',
            `Open this link within ${Math.round(this.settings.resetTokenTtlMs / 60_000)} minutes to choose a new one:`,
            '',
            link,
            '',
            'If you did not ask for it, ignore this mail: your password stays as it is.',
          ].join('\n'),
        })
        .catch(() => undefined);
    }
    return RESET_REQUESTED;
  }

  /** A fresh link for an administrator without mail (`hortus user reset-link`); it replaces older ones. */
  async linkFor(input: { email: unknown }): Promise<{ readonly user: User; readonly link: string }> {
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    return { user, link: await this.newLink(user) };
  }

  private async newLink(user: User): Promise<string> {
    const token = this.oneTime.generate();
    const expiresAt = new Date(this.clock.now().getTime() + this.settings.resetTokenTtlMs);
    await this.users.setResetToken(user.id, this.oneTime.digest(token), expiresAt);
    return resetLink(this.settings.appUrl, user.id, token);
  }
}
