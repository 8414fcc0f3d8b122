import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type OutboxMessage } from '@hortus/core';
import { startSmtpTestServer } from '@hortus/test-support';
import { ChannelNotifier, LogMailer, SmtpMailer, webhookSignature } from '@hortus/mail';

chai.use(chaiAsPromised);
const { expect } = chai;

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const secret = 'receiver-secret-0123456789';

function outboxMessage(channel: OutboxMessage['channel']): OutboxMessage {
  return {
    id: '6650a1b2c3d4e5f6a7b8c9d0',
    group: 'gh',
    event: 'opened',
    channel,
    subject: '[Hortus] gh: Temperature (esp/air/temperature) is above its maximum of 30: 31',
    text: 'Temperature (esp/air/temperature) is above its maximum of 30: 31\n\nGroup: gh\n',
    payload: {
      group: 'gh',
      event: 'opened',
      message: 'Temperature is above its maximum of 30: 31',
      value: 31,
    },
    createdAt: new Date('2026-06-10T12:00:00Z'),
    status: 'pending',
    attempts: 1,
    nextAttemptAt: new Date('2026-06-10T12:02:00Z'),
  };
}

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A local webhook receiver answering the statuses given in turn (then 200), keeping every request. */
async function receiver(
  statuses: number[],
  headers: Record<string, string> = {},
): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(statuses.shift() ?? 200, headers).end('{"echo":"not to be logged"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/token123`,
    received,
    server,
  };
}

const fast = { timeoutMs: 5_000, retries: 2, retryDelayMs: 20 };
const clock = { now: () => new Date() };

describe('ChannelNotifier', () => {
  it('when the receiver fails twice and then accepts, then the same signed body is posted three times and delivery succeeds', async () => {
    const hook = await receiver([503, 500]);
    try {
      const notifier = new ChannelNotifier(new LogMailer(quiet), fast, clock);
      await notifier.deliver(outboxMessage({ type: 'webhook', url: hook.url, secret }));
      expect(hook.received).to.have.length(3);
      const bodies = new Set(hook.received.map((r) => r.body));
      expect(bodies.size).to.equal(1);
      const [first] = hook.received;
      const body = first?.body ?? '';
      expect(JSON.parse(body)).to.deep.equal({
        id: '6650a1b2c3d4e5f6a7b8c9d0',
        group: 'gh',
        event: 'opened',
        message: 'Temperature is above its maximum of 30: 31',
        value: 31,
      });
      for (const { headers } of hook.received) {
        expect(headers['x-hortus-signature']).to.equal(webhookSignature(secret, body));
        expect(headers['x-hortus-delivery']).to.equal('6650a1b2c3d4e5f6a7b8c9d0');
        expect(headers['content-type']).to.equal('application/json');
      }
      // What a receiver computes on its side, with nothing but the secret and the raw body.
      const { createHmac } = await import('node:crypto');
      expect(first?.headers['x-hortus-signature']).to.equal(
        `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      );
    } finally {
      hook.server.close();
    }
  });

  it('when the receiver keeps failing, then delivery rejects naming only the origin and the status, after the retries', async () => {
    const hook = await receiver([500, 500, 500, 500]);
    try {
      const notifier = new ChannelNotifier(new LogMailer(quiet), fast, clock);
      const rejection = await expect(
        notifier.deliver(outboxMessage({ type: 'webhook', url: hook.url, secret })),
      ).to.be.rejectedWith(Error, /answered 500/u);
      expect((rejection as Error).message).not.to.contain('token123');
      expect(hook.received).to.have.length(3);
    } finally {
      hook.server.close();
    }
  });

  it('when the receiver asks to retry after an hour, then the retry waits no longer than the longest backoff', async () => {
    const hook = await receiver([429], { 'retry-after': '3600' });
    try {
      const notifier = new ChannelNotifier(new LogMailer(quiet), fast, clock);
      const started = Date.now();
      await notifier.deliver(outboxMessage({ type: 'webhook', url: hook.url, secret }));
      // The longest backoff here is 40 ms; an honoured Retry-After would be 3,600,000 ms.
      expect(Date.now() - started).to.be.below(4_000);
      expect(hook.received).to.have.length(2);
    } finally {
      hook.server.close();
    }
  });

  it('when the receiver does not answer in time, then delivery rejects instead of hanging', async () => {
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const notifier = new ChannelNotifier(new LogMailer(quiet), { ...fast, timeoutMs: 200 }, clock);
      await expect(notifier.deliver(outboxMessage({ type: 'webhook', url, secret }))).to.be.rejectedWith(
        Error,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('when a receiver with a token in its URL does not answer in time, then the error names only its origin', async () => {
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const notifier = new ChannelNotifier(new LogMailer(quiet), { ...fast, timeoutMs: 200 }, clock);
      const rejection = await expect(
        notifier.deliver(outboxMessage({ type: 'webhook', url: `${origin}/hook/token123?key=k3y`, secret })),
      ).to.be.rejectedWith(Error, /timed out/u);
      expect((rejection as Error).message).to.contain(origin);
      expect((rejection as Error).message).not.to.match(/token123|k3y/u);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('when a hook URL has user:password@, then they go as Basic authorization, and no error names them', async () => {
    const hook = await receiver([200, 500, 500, 500]);
    try {
      const notifier = new ChannelNotifier(new LogMailer(quiet), fast, clock);
      const withUser = hook.url.replace('http://', 'http://hook%20user:pa%3Ass@');
      await notifier.deliver(outboxMessage({ type: 'webhook', url: withUser, secret }));
      expect(hook.received[0]?.headers.authorization).to.equal(
        `Basic ${Buffer.from('hook user:pa:ss').toString('base64')}`,
      );
      const rejection = await expect(
        notifier.deliver(outboxMessage({ type: 'webhook', url: withUser, secret })),
      ).to.be.rejectedWith(Error, /answered 500/u);
      expect((rejection as Error).message).not.to.match(/hook%20user|pa%3Ass|token123/u);
    } finally {
      hook.server.close();
    }
  });

  it('when a message goes to e-mail, then a real SMTP server receives it for the group address', async () => {
    const smtp = await startSmtpTestServer();
    const mailer = new SmtpMailer({ smtpUrl: smtp.url, from: 'Hortus <hortus@example.org>' }, quiet);
    try {
      await new ChannelNotifier(mailer, fast, clock).deliver(
        outboxMessage({ type: 'email', to: 'grower@example.org' }),
      );
      expect(smtp.delivered).to.have.length(1);
      expect(smtp.delivered[0]?.to).to.deep.equal(['grower@example.org']);
      expect(smtp.delivered[0]?.data).to.match(/^Subject: \[Hortus\] gh: Temperature/mu);
      expect(smtp.delivered[0]?.body).to.contain('is above its maximum of 30: 31');
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});
