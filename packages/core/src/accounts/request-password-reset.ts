import { inject, injectable, optional } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { NotFoundError } from '../shared/errors.js';
import { LOGGER, type Logger } from '../shared/logger.port.js';
import { requireEmail, type User } from '../users/user.js';
import { USER_REPOSITORY, type UserRepository } from '../users/user.port.js';
import { ACCOUNT_SETTINGS, type AccountSettings, resetLink } from './account.js';
import { MAILER, type Mailer, ONE_TIME_TOKENS, type OneTimeTokens } from './accounts.port.js';

export const RESET_REQUESTED =
  'If an account has this e-mail, a link to reset its password has been sent to it.';
export const RESET_MAIL_SUBJECT = 'Reset your Hortus password';
/** Resets asked but not yet handled; more are dropped with a warning (the answer is the same). */
export const MAX_PENDING_RESETS = 100;

@injectable()
export class RequestPasswordReset {
  private pending = 0;

  constructor(
    @inject(USER_REPOSITORY) private readonly users: UserRepository,
    @inject(ONE_TIME_TOKENS) private readonly oneTime: OneTimeTokens,
    @inject(MAILER) private readonly mailer: Mailer,
    @inject(ACCOUNT_SETTINGS) private readonly settings: AccountSettings,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(RecordAudit) private readonly audit: RecordAudit,
    @inject(LOGGER) @optional() private readonly logger?: Logger,
  ) {}

  /**
   * Answers at once, the same for every e-mail, and mails a reset link afterwards when the e-mail has an
   * account with a password. Everything that differs between an e-mail with an account and one without
   * (the look-up, the token write, the mail) happens after the answer, so neither its text nor its
   * timing tells who has an account. Failures there are logged, never answered.
   *
   * An account without a password gets no link here: anyone may change its e-mail (the route of docs/api.md, User e-mail, needs no
   * credential for it), so a link to whatever address it has now would hand the account to whoever set
   * that address. Its first password comes from the operator (`hortus user set-password` or `reset-link`).
   */
  async execute(input: { email: unknown }): Promise<string> {
    const email = requireEmail(input.email);
    if (this.pending >= MAX_PENDING_RESETS) {
      // A flood of requests must not pile up work behind the answers; the answer stays the same.
      this.logger?.warn('password reset dropped', { reason: 'too many pending', pending: this.pending });
      return RESET_REQUESTED;
    }
    this.pending += 1;
    // setImmediate: after the answer has been handed to the transport, not merely after this await.
    setImmediate(() => {
      this.mailLink(email)
        .catch((error: unknown) =>
          this.logger?.error('password reset failed', {
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .finally(() => {
          this.pending -= 1;
        });
    });
    return RESET_REQUESTED;
  }

  /** Resolves when every reset asked so far has been handled (tests, tidy shutdowns). */
  async settled(): Promise<void> {
    while (this.pending > 0) await new Promise((resolve) => setImmediate(resolve));
  }

  private async mailLink(email: string): Promise<void> {
    const user = await this.users.findByEmail(email);
    const credentials = user === undefined ? undefined : await this.users.findCredentials(user.id);
    if (user === undefined || credentials?.passwordHash === undefined) return;
    const link = await this.newLink(user);
    // The mailer reports its own failures; a slow SMTP server holds nothing here.
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

  /** A fresh link for an administrator without mail (`hortus user reset-link`); it replaces older ones. */
  async linkFor(input: {
    email: unknown;
    actor?: Actor;
  }): Promise<{ readonly user: User; readonly link: string }> {
    const user = await this.users.findByEmail(requireEmail(input.email));
    if (user === undefined) throw new NotFoundError('user', 'User not found.');
    const link = await this.newLink(user);
    // That a link was made, for whom and until when; never the link, which opens the account.
    await this.audit.execute(input.actor, {
      action: 'user.reset-link',
      target: user.email,
      after: { expiresAt: new Date(this.clock.now().getTime() + this.settings.resetTokenTtlMs) },
    });
    return { user, link };
  }

  private async newLink(user: User): Promise<string> {
    const token = this.oneTime.generate();
    const expiresAt = new Date(this.clock.now().getTime() + this.settings.resetTokenTtlMs);
    await this.users.setResetToken(user.id, this.oneTime.digest(token), expiresAt);
    return resetLink(this.settings.appUrl, user.id, token);
  }
}
