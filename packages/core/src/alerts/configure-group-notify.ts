import { inject, injectable } from 'inversify';
import { RecordAudit } from '../audit/record-audit.js';
import { type Actor } from '../shared/actor.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import {
  alertEvents,
  defaultAlertEvents,
  type GroupNotifySettings,
  type Webhook,
  type WebhookFormat,
  webhookFormats,
  wantsEmail,
} from './alert-message.js';
import { ALERT_OUTBOX_REPOSITORY, type AlertOutboxRepository } from './alert-outbox.port.js';
import { SHA256_HEX, type Sha256Hex } from '../shared/digest.port.js';
import { isMaskedWebhookUrl, maskWebhookUrl } from './webhook-url.js';

export interface NotifyChange {
  readonly group: string;
  /** `format` is checked here: it may come as any text from a transport. */
  readonly addWebhook?: Omit<Webhook, 'format'> & { readonly format?: string };
  readonly removeWebhook?: string;
  readonly events?: readonly string[];
  readonly actor?: Actor;
}

function requireWebhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not echoed: a hook URL may hold its token.
    throw InvalidInputError.forField('url', 'is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw InvalidInputError.forField('url', 'must be an http:// or https:// URL');
  return url.toString();
}

/**
 * Any text of 16+ characters, or a Standard Webhooks secret: `whsec_` + base64 of 24 to 64 bytes, as the
 * spec has it (a `whsec_` text that is not one would be signed with a key the receiver does not hold).
 */
function requireWebhookSecret(secret: string): void {
  if (!secret.startsWith('whsec_')) {
    if (secret.length < 16) throw InvalidInputError.forField('secret', 'must be at least 16 characters');
    return;
  }
  const encoded = secret.slice('whsec_'.length);
  const bytes = (encoded.length / 4) * 3 - (encoded.match(/=*$/u)?.[0].length ?? 0);
  if (!/^[A-Za-z0-9+/]*={0,2}$/u.test(encoded) || encoded.length % 4 !== 0 || bytes < 24 || bytes > 64)
    throw InvalidInputError.forField('secret', 'starting with whsec_ must be base64 of 24 to 64 bytes');
}

function isWebhookFormat(value: string): value is WebhookFormat {
  return (webhookFormats as readonly string[]).includes(value);
}

/**
 * A hook is named by its whole URL, or by the masked form listings show (its digest tells hooks on one origin
 * apart; should two digests meet, the whole URL is asked for).
 */
function findWebhook(
  webhooks: readonly Webhook[],
  given: string,
  group: string,
  sha256Hex: Sha256Hex,
): string {
  const wanted = given.trim();
  const masked = isMaskedWebhookUrl(wanted);
  const matches = masked
    ? webhooks.filter((hook) => maskWebhookUrl(hook.url, sha256Hex) === wanted)
    : webhooks.filter((hook) => hook.url === requireWebhookUrl(wanted));
  if (matches.length > 1)
    throw InvalidInputError.forField('url', `several webhooks show as ${wanted}: give the whole URL`);
  const found = matches[0]?.url;
  if (found === undefined)
    throw new NotFoundError(
      'group',
      `Group ${group} has no webhook ${masked ? wanted : maskWebhookUrl(wanted, sha256Hex)}`,
    );
  return found;
}

/** A hook as the use case answers it: `masked` is the one form every listing shows (CLI, HTTP, audit). */
export interface ShownWebhook extends Webhook {
  readonly masked: string;
}

export type NotifyView = Omit<GroupNotifySettings, 'webhooks'> & {
  readonly webhooks: readonly ShownWebhook[];
  readonly email?: string;
  /** Messages still queued for a webhook this change removed, now cancelled. */
  readonly cancelled?: number;
};

/** Shows or changes where a group's alerts go (webhooks) and which events are sent. */
@injectable()
export class ConfigureGroupNotify {
  constructor(
    @inject(ALERT_OUTBOX_REPOSITORY) private readonly outbox: AlertOutboxRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(RecordAudit) private readonly audit: RecordAudit,
    @inject(SHA256_HEX) private readonly sha256Hex: Sha256Hex,
  ) {}

  async execute(change: NotifyChange): Promise<NotifyView> {
    const group = await this.groups.findByName(change.group);
    if (group === undefined) throw new NotFoundError('group', `Group ${change.group} not found`);
    const current = (await this.outbox.getSettings(group.name)) ?? {
      group: group.name,
      webhooks: [],
      events: defaultAlertEvents,
    };
    let { webhooks, events } = current;
    let removed: string | undefined;
    if (change.removeWebhook !== undefined) {
      const url = findWebhook(webhooks, change.removeWebhook, group.name, this.sha256Hex);
      webhooks = webhooks.filter((hook) => hook.url !== url);
      removed = url;
    }
    if (change.addWebhook !== undefined) {
      const url = requireWebhookUrl(change.addWebhook.url);
      requireWebhookSecret(change.addWebhook.secret);
      const format = change.addWebhook.format ?? 'json';
      if (!isWebhookFormat(format))
        throw InvalidInputError.forField('format', `must be one of ${webhookFormats.join(', ')}`);
      // json is stored as no format: the same record as a hook from before formats.
      const hook: Webhook = {
        url,
        secret: change.addWebhook.secret,
        ...(format === 'json' ? {} : { format }),
      };
      webhooks = [...webhooks.filter((existing) => existing.url !== url), hook];
    }
    if (change.events !== undefined) {
      const unknown = change.events.filter((event) => !(alertEvents as readonly string[]).includes(event));
      if (unknown.length > 0)
        throw InvalidInputError.forField(
          'events',
          `must be among ${alertEvents.join(', ')}; got ${unknown.join(', ')}`,
        );
      events = alertEvents.filter((event) => change.events?.includes(event));
    }
    const next = { group: group.name, webhooks, events };
    if (
      change.addWebhook !== undefined ||
      change.removeWebhook !== undefined ||
      change.events !== undefined
    ) {
      await this.outbox.saveSettings(next);
      // Secrets stay out of the trail: hooks by URL origin and format only.
      const shown = (settings: { webhooks: readonly Webhook[]; events: readonly string[] }): unknown => ({
        webhooks: settings.webhooks.map((hook) => ({
          url: maskWebhookUrl(hook.url, this.sha256Hex),
          format: hook.format ?? 'json',
        })),
        events: settings.events,
      });
      await this.audit.execute(change.actor, {
        action: 'group.notify',
        target: group.name,
        group: group.name,
        before: shown(current),
        after: shown(next),
      });
    }
    // What was queued for a removed hook is not sent later with its secret (saved first: no new ones come).
    const cancelled =
      removed === undefined || webhooks.some((hook) => hook.url === removed)
        ? undefined
        : await this.outbox.cancelWebhook(group.name, removed, 'cancelled: the webhook was removed');
    const email = wantsEmail(group.settings);
    return {
      ...next,
      webhooks: webhooks.map((hook) => ({ ...hook, masked: maskWebhookUrl(hook.url, this.sha256Hex) })),
      ...(email === undefined ? {} : { email }),
      ...(cancelled === undefined ? {} : { cancelled }),
    };
  }
}
