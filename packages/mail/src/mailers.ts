import {
  ConfigError,
  type Env,
  type Logger,
  MAILER,
  type Mailer,
  type MailMessage,
  redactUrl,
} from '@hortus/core';
import { ContainerModule } from 'inversify';
// `import type`: erased, so nodemailer loads only with the first mail (see SmtpMailer).
import type { Transporter } from 'nodemailer';

export interface MailSettings {
  /** `smtp://user:pass@host:587` or `smtps://...`; without it mail goes to the log. */
  readonly smtpUrl?: string;
  /** The sender, e.g. `Hortus <hortus@example.org>`. */
  readonly from: string;
}

export const DEFAULT_MAIL_FROM = 'Hortus <hortus@localhost>';

/** Reads SMTP_URL and MAIL_FROM. */
export function mailSettingsFromEnv(env: Env): MailSettings {
  const problems: string[] = [];
  const smtpUrl = env['SMTP_URL']?.trim() || undefined;
  if (smtpUrl !== undefined && !/^smtps?:\/\/[^\s/]+\/?(\?\S*)?$/u.test(smtpUrl)) {
    problems.push(
      `SMTP_URL must look like smtp://user:password@host:587 or smtps://..., got "${redactUrl(smtpUrl)}"`,
    );
  }
  const from = env['MAIL_FROM']?.trim() || DEFAULT_MAIL_FROM;
  if (!/^[^\r\n]*<?[^\s@<>]+@[^\s@<>]+>?$/u.test(from)) {
    problems.push(`MAIL_FROM must be an address such as "Hortus <hortus@example.org>", got "${from}"`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...(smtpUrl === undefined ? {} : { smtpUrl }), from };
}

/**
 * Mail through an SMTP server with nodemailer; failures are logged (without the message's text) and rejected.
 * nodemailer is loaded with the first mail: most commands of a process send none.
 */
export class SmtpMailer implements Mailer {
  private transport: Promise<Transporter> | undefined;

  constructor(
    private readonly settings: MailSettings & { readonly smtpUrl: string },
    private readonly logger: Logger,
  ) {}

  private transporter(): Promise<Transporter> {
    this.transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport(this.settings.smtpUrl),
    );
    return this.transport;
  }

  async send(message: MailMessage): Promise<void> {
    try {
      const transport = await this.transporter();
      await transport.sendMail({
        from: this.settings.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
      });
      this.logger.info('mail sent', { to: message.to, subject: message.subject });
    } catch (error) {
      // The text may hold a reset link: it never goes to the log from here.
      this.logger.error('mail failed', {
        to: message.to,
        subject: message.subject,
        server: redactUrl(this.settings.smtpUrl),
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  close(): void {
    void this.transport?.then((transport) => transport.close());
  }
}

/**
 * Without SMTP the message is written to the log as a warning, so a self-hoster without mail can still
 * read a reset link there. Anyone who reads the log can use the link: keep the log private.
 */
export class LogMailer implements Mailer {
  constructor(private readonly logger: Logger) {}

  async send(message: MailMessage): Promise<void> {
    this.logger.warn('mail not sent: no SMTP_URL, so it is written here', {
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
  }
}

/** Binds the core's Mailer: SMTP when SMTP_URL is set, the log otherwise. */
export function mailModule(settings: MailSettings, logger: Logger): ContainerModule {
  const { smtpUrl } = settings;
  const mailer =
    smtpUrl === undefined ? new LogMailer(logger) : new SmtpMailer({ ...settings, smtpUrl }, logger);
  return new ContainerModule(({ bind }) => {
    bind<Mailer>(MAILER).toConstantValue(mailer);
  });
}
