import { createHmac } from 'node:crypto';
import {
  CLOCK,
  type Clock,
  ConfigError,
  type Env,
  MAILER,
  type Mailer,
  NOTIFIER,
  type Notifier,
  type OutboxMessage,
  redactUrl,
  withOriginsOnly,
} from '@hortus/core';
import { ContainerModule, inject, injectable } from 'inversify';
import { webhookRequest } from './webhook-formats.js';

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

/**
 * The old signature header's value (`X-Hortus-Signature`, kept for one release): HMAC-SHA256 of the exact
 * body, hex, keyed with the secret's text as it was given.
 */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * The key Standard Webhooks signs with. A `whsec_` secret is, as the spec serializes it, base64 of the key
 * bytes; any other secret is its own UTF-8 bytes, which receivers' libraries take as `whsec_` + base64 of it.
 */
export function standardWebhookKey(secret: string): Buffer {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** The secret as Standard Webhooks libraries take it (`whsec_` + base64 of the key). */
export function standardWebhookSecret(secret: string): string {
  return `whsec_${standardWebhookKey(secret).toString('base64')}`;
}

/**
 * The Standard Webhooks headers: the message id (the same on every attempt, so a receiver drops repeats),
 * the send time in whole Unix seconds (so a receiver refuses old ones: a replay), and `v1,` + base64
 * HMAC-SHA256 over `id.timestamp.body`.
 */
export function standardWebhookHeaders(
  id: string,
  secret: string,
  body: string,
  now: Date,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = createHmac('sha256', standardWebhookKey(secret))
    .update(`${id}.${timestamp}.${body}`, 'utf8')
    .digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/**
 * Delivers outbox messages: e-mail through the Mailer (SMTP, or the log without SMTP), webhooks as a POST
 * signed the Standard Webhooks way (and with the old `X-Hortus-Signature`). The message id, the same on
 * every attempt (`webhook-id`, and the old `X-Hortus-Delivery`), lets a receiver drop the repeat that
 * at-least-once delivery may bring.
 */
@injectable()
export class ChannelNotifier implements Notifier {
  constructor(
    @inject(MAILER) private readonly mailer: Mailer,
    @inject(WEBHOOK_SETTINGS) private readonly webhooks: WebhookSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async deliver(message: OutboxMessage): Promise<void> {
    const { channel } = message;
    if (channel.type === 'email') {
      await this.mailer.send({ to: channel.to, subject: message.subject, text: message.text });
      return;
    }
    const { body, headers } = webhookRequest(message, channel.format);
    const { retryDelayMs } = this.webhooks;
    const longestBackoffMs = retryDelayMs * 2 ** Math.max(0, this.webhooks.retries - 1);
    const { url, authorization } = splitCredentials(channel.url);
    // ky is loaded with the first webhook: most processes never send one.
    const { default: ky, HTTPError } = await import('ky');
    try {
      await ky.post(url, {
        body,
        headers: {
          ...headers,
          ...(authorization === undefined ? {} : { authorization }),
          'user-agent': 'Hortus',
          ...standardWebhookHeaders(message.id, channel.secret, body, this.clock.now()),
          'x-hortus-event': message.event,
          'x-hortus-delivery': message.id,
          'x-hortus-signature': webhookSignature(channel.secret, body),
        },
        // One bound for the whole delivery, retries and their waits included (ky 2's totalTimeout).
        timeout: this.webhooks.timeoutMs,
        totalTimeout: this.webhooks.timeoutMs,
        redirect: 'error',
        retry: {
          limit: this.webhooks.retries,
          methods: ['post'],
          statusCodes: [408, 429, 500, 502, 503, 504],
          delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
          // A receiver's Retry-After of an hour must not hold the outbox worker: the outbox retries later anyway.
          maxRetryAfter: longestBackoffMs,
        },
      });
    } catch (error) {
      // The receiver's answer body is not kept: it may echo what it was sent.
      if (error instanceof HTTPError)
        throw new Error(`Webhook ${redactUrl(url)} answered ${error.response.status}`);
      // The client's messages name the whole URL (a timeout's does): cut every URL in them to its origin.
      throw new Error(withOriginsOnly(`Webhook ${redactUrl(url)} failed: ${failure(error)}`));
    }
  }
}

function failure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  return cause instanceof Error && cause.message !== error.message
    ? `${error.message} (${cause.message})`
    : error.message;
}

/**
 * fetch refuses a URL with `user:password@`: they go as the Basic authorization they mean, and the
 * request goes to the URL without them.
 */
function splitCredentials(stored: string): { url: string; authorization?: string } {
  const url = new URL(stored);
  if (url.username === '' && url.password === '') return { url: stored };
  const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.toString(), authorization: `Basic ${Buffer.from(user, 'utf8').toString('base64')}` };
}

/** Binds the core's Notifier over the Mailer the mail module binds. */
export function notifierModule(webhooks: WebhookSettings = defaultWebhookSettings): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<WebhookSettings>(WEBHOOK_SETTINGS).toConstantValue(webhooks);
    bind<Notifier>(NOTIFIER).to(ChannelNotifier).inSingletonScope();
  });
}
