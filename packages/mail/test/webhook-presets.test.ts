import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import * as chai from 'chai';
import { type AlertEvent, type OutboxMessage, type WebhookFormat } from '@hortus/core';
import { ChannelNotifier, LogMailer } from '@hortus/mail';

const { expect } = chai;

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const notifier = new ChannelNotifier(
  new LogMailer(quiet),
  { timeoutMs: 5_000, retries: 0, retryDelayMs: 20 },
  { now: () => new Date() },
);
const MESSAGE = 'Humidity (esp/air/humidity) is above its maximum of 80: 91';

interface Request {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A local stand-in for the service: it answers 400 (as the service would) unless `accepts` finds the
 * request in the shape that service takes, and keeps what it got.
 */
async function service(
  accepts: (request: Request) => boolean,
): Promise<{ url: string; got: Request[]; server: Server }> {
  const got: Request[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      got.push(received);
      response.writeHead(request.method === 'POST' && accepts(received) ? 200 : 400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/publish`, got, server };
}

function message(
  url: string,
  format: WebhookFormat,
  event: AlertEvent = 'opened',
  group = 'gh',
): OutboxMessage {
  return {
    id: '6650a1b2c3d4e5f6a7b8c9d0',
    group,
    event,
    channel: { type: 'webhook', url, secret: 'receiver-secret-0123456789', format },
    subject: `[Hortus] ${group}: ${MESSAGE}`,
    text: `${MESSAGE}\n`,
    payload: { group, event, message: MESSAGE, time: '2026-06-10T12:00:00.000Z', value: 91 },
    createdAt: new Date('2026-06-10T12:00:00Z'),
    status: 'pending',
    attempts: 1,
    nextAttemptAt: new Date('2026-06-10T12:00:00Z'),
  };
}

function jsonBody(request: Request): Record<string, unknown> | undefined {
  if (request.headers['content-type'] !== 'application/json') return undefined;
  try {
    const parsed: unknown = JSON.parse(request.body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Exactly these keys, with these types. */
function shaped(body: Record<string, unknown> | undefined, types: Record<string, string>): boolean {
  if (body === undefined) return false;
  const keys = Object.keys(body).sort();
  return (
    keys.join() === Object.keys(types).sort().join() && keys.every((key) => typeof body[key] === types[key])
  );
}

async function deliverTo(
  accepts: (request: Request) => boolean,
  format: WebhookFormat,
  event?: AlertEvent,
  group?: string,
): Promise<Request> {
  const receiver = await service(accepts);
  try {
    await notifier.deliver(message(receiver.url, format, event, group));
    expect(receiver.got).to.have.length(1);
    return receiver.got[0] as Request;
  } finally {
    receiver.server.close();
  }
}

describe('Webhook presets: each service gets the shape it takes', () => {
  it('when the format is ntfy, then the message is the text body, with Title, Priority and Tags headers', async () => {
    const request = await deliverTo(
      (r) =>
        r.body === MESSAGE &&
        /^text\/plain/u.test(r.headers['content-type'] ?? '') &&
        typeof r.headers['title'] === 'string' &&
        /^[1-5]$/u.test(String(r.headers['priority'])) &&
        typeof r.headers['tags'] === 'string',
      'ntfy',
    );
    expect(request.headers['title']).to.equal('Hortus gh: alert');
    expect(request.headers['priority']).to.equal('4');
    expect(request.headers['tags']).to.equal('warning,hortus');
    const resolved = await deliverTo((r) => r.body === MESSAGE, 'ntfy', 'resolved');
    expect(resolved.headers['priority']).to.equal('3');
    expect(resolved.headers['tags']).to.equal('white_check_mark,hortus');
  });

  it('when the format is ntfy and the group name is not ASCII, then the title goes as an RFC 2047 word ntfy decodes', async () => {
    const request = await deliverTo((r) => r.body === MESSAGE, 'ntfy', 'opened', 'Gewächshaus');
    const title = String(request.headers['title']);
    const encoded = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=$/u.exec(title)?.[1] ?? '';
    expect(Buffer.from(encoded, 'base64').toString('utf8')).to.equal('Hortus Gewächshaus: alert');
  });

  it('when the format is gotify, then the body is {title, message, priority}', async () => {
    const request = await deliverTo(
      (r) => shaped(jsonBody(r), { title: 'string', message: 'string', priority: 'number' }),
      'gotify',
    );
    expect(JSON.parse(request.body)).to.deep.equal({
      title: 'Hortus gh: alert',
      message: MESSAGE,
      priority: 8,
    });
  });

  it('when the format is slack, then the body is {text} as an incoming webhook takes it', async () => {
    const request = await deliverTo((r) => shaped(jsonBody(r), { text: 'string' }), 'slack');
    expect(JSON.parse(request.body)).to.deep.equal({ text: `Hortus gh: alert\n${MESSAGE}` });
  });

  it('when the format is discord, then the body is {content} of at most 2000 characters', async () => {
    const request = await deliverTo((r) => {
      const body = jsonBody(r);
      return shaped(body, { content: 'string' }) && String(body?.['content']).length <= 2000;
    }, 'discord');
    expect(JSON.parse(request.body)).to.deep.equal({ content: `**Hortus gh: alert**\n${MESSAGE}` });
  });

  it('when the format is json, then the body is Hortus own JSON, as before formats', async () => {
    const request = await deliverTo((r) => jsonBody(r)?.['id'] === '6650a1b2c3d4e5f6a7b8c9d0', 'json');
    expect(JSON.parse(request.body)).to.deep.equal({
      id: '6650a1b2c3d4e5f6a7b8c9d0',
      group: 'gh',
      event: 'opened',
      message: MESSAGE,
      time: '2026-06-10T12:00:00.000Z',
      value: 91,
    });
  });
});
