import { createHmac } from 'node:crypto';
import {
  ConfigError,
  type Env,
  MAILER,
  type Mailer,
  NOTIFIER,
  type Notifier,
  type OutboxMessage,
} from '@hortus/core';
import { ContainerModule, inject, injectable } from 'inversify';

export interface WebhookSettings {
  /** Time for one delivery, retries included. */
  readonly timeoutMs: number;
  /** Retries of one delivery on a network error or a 408/429/5xx answer, before the outbox tries later. */
  readonly retries: number;
  /** Wait before the first retry; each next one waits twice as long. */
  readonly retryDelayMs: number;
}

export const WEBHOOK_SETTINGS = Symbol.for('hortus.WebhookSettings');

export const defaultWebhookSettings: WebhookSettings = { timeoutMs: 10_000, retries: 2, retryDelayMs: 1_000 };

/** Reads WEBHOOK_TIMEOUT_MS (1000-60000). */
export function webhookSettingsFromEnv(env: Env): WebhookSettings {
  const raw = env['WEBHOOK_TIMEOUT_MS']?.trim();
  if (raw === undefined || raw === '') return defaultWebhookSettings;
  const timeoutMs = Number(raw);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1000 || timeoutMs > 60_000)
    throw new ConfigError([`WEBHOOK_TIMEOUT_MS must be a whole number from 1000 to 60000, got "${raw}"`]);
  return { ...defaultWebhookSettings, timeoutMs };
}

/** The signature header's value: HMAC-SHA256 of the exact body, hex, as GitHub-style receivers check it. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * Delivers outbox messages: e-mail through the Mailer (SMTP, or the log without SMTP), webhooks as a signed
 * JSON POST. `X-Hortus-Delivery` is the message id, the same on every attempt, so a receiver can drop the
 * repeat that at-least-once delivery may bring.
 */
@injectable()
export class ChannelNotifier implements Notifier {
  constructor(
    @inject(MAILER) private readonly mailer: Mailer,
    @inject(WEBHOOK_SETTINGS) private readonly webhooks: WebhookSettings,
  ) {}

  async deliver(message: OutboxMessage): Promise<void> {
    const { channel } = message;
    if (channel.type === 'email') {
      await this.mailer.send({ to: channel.to, subject: message.subject, text: message.text });
      return;
    }
    const body = JSON.stringify({ id: message.id, ...message.payload });
    const { retryDelayMs } = this.webhooks;
    // ky is loaded with the first webhook: most processes never send one.
    const { default: ky, HTTPError } = await import('ky');
    try {
      await ky.post(channel.url, {
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Hortus',
          'x-hortus-event': message.event,
          'x-hortus-delivery': message.id,
          'x-hortus-signature': webhookSignature(channel.secret, body),
        },
        timeout: this.webhooks.timeoutMs,
        redirect: 'error',
        retry: {
          limit: this.webhooks.retries,
          methods: ['post'],
          statusCodes: [408, 429, 500, 502, 503, 504],
          delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
        },
      });
    } catch (error) {
      // The receiver's answer body is not kept: it may echo what it was sent.
      if (error instanceof HTTPError)
        throw new Error(`Webhook ${redactUrl(channel.url)} answered ${error.response.status}`);
      throw new Error(
        `Webhook ${redactUrl(channel.url)} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

/** Hook URLs often carry their token in the path or query: only the origin goes to errors and logs. */
export function redactUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an unparsable URL';
  }
}

/** Binds the core's Notifier over the Mailer the mail module binds. */
export function notifierModule(webhooks: WebhookSettings = defaultWebhookSettings): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<WebhookSettings>(WEBHOOK_SETTINGS).toConstantValue(webhooks);
    bind<Notifier>(NOTIFIER).to(ChannelNotifier).inSingletonScope();
  });
}
