import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import * as chai from 'chai';
import { type OutboxMessage } from '@hortus/core';
import { ChannelNotifier, LogMailer, standardWebhookSecret, webhookSignature } from '@hortus/mail';

const { expect } = chai;

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const fast = { timeoutMs: 5_000, retries: 0, retryDelayMs: 20 };
const toleranceSeconds = 5 * 60;

/**
 * A receiver's check, written from the Standard Webhooks spec alone: the secret is `whsec_` + base64 of
 * the key; sign `id.timestamp.body` with HMAC-SHA256; `webhook-signature` is a space-separated list of
 * `v1,<base64>`, one of which must match (constant-time); a timestamp more than 5 minutes from the
 * receiver's clock is refused, which is what catches a replay.
 */
function verify(secret: string, headers: IncomingHttpHeaders, body: string, nowSeconds: number): string {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string')
    return 'missing headers';
  if (!/^\d+$/u.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds)
    return 'timestamp outside the tolerance';
  if (!secret.startsWith('whsec_')) return 'not a whsec_ secret';
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? 'ok' : 'bad signature';
}

interface Delivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly verdict: string;
}

/** A local receiver that verifies each POST as above and answers 401 to one that fails. */
async function verifyingReceiver(
  secret: string,
  receiverNow: () => number,
): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verdict = verify(secret, request.headers, body, receiverNow());
      deliveries.push({ headers: request.headers, body, verdict });
      response.writeHead(verdict === 'ok' ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries, server };
}

function message(secret: string, id = '6650a1b2c3d4e5f6a7b8c9d0'): OutboxMessage {
  return {
    id,
    group: 'gh',
    event: 'opened',
    channel: { type: 'webhook', url: 'http://placeholder/', secret },
    subject: '[Hortus] gh: Humidity is above its maximum of 80: 91',
    text: 'Humidity is above its maximum of 80: 91\n',
    payload: { group: 'gh', event: 'opened', message: 'Humidity is above its maximum of 80: 91', value: 91 },
    createdAt: new Date('2026-06-10T12:00:00Z'),
    status: 'pending',
    attempts: 1,
    nextAttemptAt: new Date('2026-06-10T12:00:00Z'),
  };
}

function to(url: string, outbox: OutboxMessage): OutboxMessage {
  return { ...outbox, channel: { ...outbox.channel, url } as OutboxMessage['channel'] };
}

describe('Standard Webhooks signing', () => {
  const sent = new Date('2026-06-10T12:00:07.900Z');
  const sentSeconds = Math.floor(sent.getTime() / 1000);
  const notifier = new ChannelNotifier(new LogMailer(quiet), fast, { now: () => sent });

  it('when a hook has a whsec_ secret, then a receiver checking the spec way accepts the delivery, with the message id and the send time in seconds', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const hook = await verifyingReceiver(secret, () => sentSeconds + 2);
    try {
      await notifier.deliver(to(hook.url, message(secret)));
      expect(hook.deliveries.map((d) => d.verdict)).to.deep.equal(['ok']);
      const [delivery] = hook.deliveries;
      expect(delivery?.headers['webhook-id']).to.equal('6650a1b2c3d4e5f6a7b8c9d0');
      expect(delivery?.headers['webhook-timestamp']).to.equal(String(sentSeconds));
      expect(delivery?.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/u);
    } finally {
      hook.server.close();
    }
  });

  it('when a hook has a plain secret, then a receiver given it as whsec_ + base64 accepts, and the old header is still signed with the plain secret', async () => {
    const plain = 'receiver-secret-0123456789';
    expect(standardWebhookSecret(plain)).to.equal(`whsec_${Buffer.from(plain).toString('base64')}`);
    const hook = await verifyingReceiver(standardWebhookSecret(plain), () => sentSeconds);
    try {
      await notifier.deliver(to(hook.url, message(plain)));
      expect(hook.deliveries.map((d) => d.verdict)).to.deep.equal(['ok']);
      const [delivery] = hook.deliveries;
      expect(delivery?.headers['x-hortus-signature']).to.equal(webhookSignature(plain, delivery?.body ?? ''));
      expect(delivery?.headers['x-hortus-delivery']).to.equal('6650a1b2c3d4e5f6a7b8c9d0');
    } finally {
      hook.server.close();
    }
  });

  it('when the receiver holds another secret, then it refuses the delivery and delivery rejects', async () => {
    const hook = await verifyingReceiver(`whsec_${randomBytes(32).toString('base64')}`, () => sentSeconds);
    try {
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      let failure: unknown;
      await notifier.deliver(to(hook.url, message(secret))).catch((error: unknown) => {
        failure = error;
      });
      expect(String(failure)).to.match(/answered 401/u);
      expect(hook.deliveries.map((d) => d.verdict)).to.deep.equal(['bad signature']);
    } finally {
      hook.server.close();
    }
  });

  it('when a captured delivery is replayed later than the tolerance, then the receiver refuses it, though its signature is intact', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    let receiverSeconds = sentSeconds;
    const hook = await verifyingReceiver(secret, () => receiverSeconds);
    try {
      await notifier.deliver(to(hook.url, message(secret)));
      const [original] = hook.deliveries;
      // An attacker sends the very same request again, 10 minutes on: the headers cannot be re-signed.
      receiverSeconds = sentSeconds + 10 * 60;
      const replay = await fetch(hook.url, {
        method: 'POST',
        body: original?.body ?? '',
        headers: {
          'content-type': 'application/json',
          'webhook-id': String(original?.headers['webhook-id']),
          'webhook-timestamp': String(original?.headers['webhook-timestamp']),
          'webhook-signature': String(original?.headers['webhook-signature']),
        },
      });
      expect(replay.status).to.equal(401);
      expect(hook.deliveries.map((d) => d.verdict)).to.deep.equal(['ok', 'timestamp outside the tolerance']);
    } finally {
      hook.server.close();
    }
  });

  it('when the body is changed on the way, then the receiver refuses it', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const hook = await verifyingReceiver(secret, () => sentSeconds);
    try {
      await notifier.deliver(to(hook.url, message(secret)));
      const [original] = hook.deliveries;
      const tampered = await fetch(hook.url, {
        method: 'POST',
        body: (original?.body ?? '').replace('91', '19'),
        headers: {
          'webhook-id': String(original?.headers['webhook-id']),
          'webhook-timestamp': String(original?.headers['webhook-timestamp']),
          'webhook-signature': String(original?.headers['webhook-signature']),
        },
      });
      expect(tampered.status).to.equal(401);
      expect(hook.deliveries.map((d) => d.verdict)).to.deep.equal(['ok', 'bad signature']);
    } finally {
      hook.server.close();
    }
  });
});
