import { type AlertEvent, type OutboxMessage, type WebhookFormat } from '@hortus/core';

/** What one webhook POST carries, in the shape its receiver expects. */
export interface WebhookRequest {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** An alert opening (or data stopping) matters more than its end; a rule's switch least. */
const levels: Record<AlertEvent, { ntfy: string; gotify: number; tags: string }> = {
  opened: { ntfy: '4', gotify: 8, tags: 'warning,hortus' },
  'no-data': { ntfy: '4', gotify: 8, tags: 'warning,hortus' },
  resolved: { ntfy: '3', gotify: 5, tags: 'white_check_mark,hortus' },
  switched: { ntfy: '2', gotify: 2, tags: 'gear,hortus' },
};

const titles: Record<AlertEvent, string> = {
  opened: 'alert',
  'no-data': 'no data',
  resolved: 'resolved',
  switched: 'switched',
};

/** Discord refuses `content` over 2000 characters. */
const DISCORD_MAX = 2000;

/**
 * The body and headers for a webhook of that format. `json` is Hortus's own body (the message id and
 * its payload). The others carry the message's text, with a short title where the service has one.
 */
export function webhookRequest(message: OutboxMessage, format: WebhookFormat = 'json'): WebhookRequest {
  const text = typeof message.payload['message'] === 'string' ? message.payload['message'] : message.subject;
  const title = `Hortus ${message.group}: ${titles[message.event]}`;
  const level = levels[message.event];
  const json = (value: unknown): WebhookRequest => ({
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json' },
  });
  switch (format) {
    case 'json':
      return json({ id: message.id, ...message.payload });
    case 'ntfy':
      return {
        body: text,
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          // Header values are Latin-1 on the wire; ntfy decodes RFC 2047 words, so any group name fits.
          title: rfc2047(title),
          priority: level.ntfy,
          tags: level.tags,
        },
      };
    case 'gotify':
      return json({ title, message: text, priority: level.gotify });
    case 'slack':
      return json({ text: `${title}\n${text}` });
    case 'discord': {
      const content = `**${title}**\n${text}`;
      return json({
        content: content.length > DISCORD_MAX ? `${content.slice(0, DISCORD_MAX - 1)}…` : content,
      });
    }
  }
}

/** Plain ASCII as it is; anything else as one UTF-8 base64 encoded word. */
function rfc2047(value: string): string {
  return /^[\x20-\x7e]*$/u.test(value)
    ? value
    : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
