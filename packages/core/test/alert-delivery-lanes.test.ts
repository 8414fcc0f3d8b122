import {
  ALERT_DELIVERY_CONCURRENCY,
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  DeliverAlertMessages,
  type DeliveryRound,
  NOTIFIER,
  type NewOutboxMessage,
  type Notifier,
  type OutboxMessage,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

/**
 * The outgoing seam: a receiver named in `hanging` does not answer until released; one in `refusing`
 * answers an error; every other one takes the message at once.
 */
class FakeReceivers implements Notifier {
  readonly delivered: OutboxMessage[] = [];
  readonly attempted: string[] = [];
  readonly hanging = new Set<string>();
  readonly refusing = new Set<string>();
  /** Most deliveries in progress at once: in all, and to any one URL. */
  maxAtOnce = 0;
  maxAtOnceToOne = 0;
  private readonly open = new Map<string, number>();
  private readonly releases: (() => void)[] = [];

  async deliver(message: OutboxMessage): Promise<void> {
    const url = message.channel.type === 'webhook' ? message.channel.url : message.channel.to;
    this.attempted.push(String(message.payload['message']));
    this.open.set(url, (this.open.get(url) ?? 0) + 1);
    this.maxAtOnceToOne = Math.max(this.maxAtOnceToOne, this.open.get(url) ?? 0);
    this.maxAtOnce = Math.max(
      this.maxAtOnce,
      [...this.open.values()].reduce((a, b) => a + b, 0),
    );
    try {
      if (this.hanging.has(url)) await new Promise<void>((resolve) => this.releases.push(resolve));
      else await Promise.resolve();
      if (this.refusing.has(url)) throw new Error(`${new URL(url).origin} answered 503`);
      this.delivered.push(message);
    } finally {
      this.open.set(url, (this.open.get(url) ?? 1) - 1);
    }
  }

  release(): void {
    this.hanging.clear();
    for (const release of this.releases.splice(0)) release();
  }
}

function webhookMessage(group: string, url: string, message: string, at: Date): NewOutboxMessage {
  return {
    group,
    event: 'opened',
    channel: { type: 'webhook', url, secret: 'a-secret-of-16-chars' },
    subject: message,
    text: message,
    payload: { group, message },
    createdAt: at,
  };
}

async function settledSoon(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  // Not a timing assert: what is checked happens at once, or (before the fix) never while a receiver hangs.
  for (let tries = 0; !(await check()); tries += 1) {
    if (tries > 200) throw new Error(`${what} did not happen while another receiver hung`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function setUp(): TestApp & { receivers: FakeReceivers; outbox: AlertOutboxRepository } {
  const app = createTestApp({ now: '2026-06-10T12:00:00Z' });
  const receivers = new FakeReceivers();
  app.container.bind<Notifier>(NOTIFIER).toConstantValue(receivers);
  return { ...app, receivers, outbox: app.container.get<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY) };
}

const dead = 'https://dead.example.org/hook';
const alive = 'https://alive.example.org/hook';

describe('alert delivery by destination', () => {
  it("when one group's receiver hangs, then another group's alert is delivered meanwhile, also one raised later", async () => {
    const app = setUp();
    app.receivers.hanging.add(dead);
    await app.outbox.enqueue([
      webhookMessage('a', dead, 'a 1', app.clock.now()),
      webhookMessage('a', dead, 'a 2', app.clock.now()),
      webhookMessage('b', alive, 'b 1', app.clock.now()),
    ]);
    const deliver = app.get(DeliverAlertMessages);
    const first = deliver.execute();
    await settledSoon('b 1 delivered', async () =>
      (await app.outbox.list('b', 10)).every((m) => m.status === 'delivered'),
    );

    // A later round (the worker's next tick) is not held back by the lane that still hangs.
    await app.outbox.enqueue([webhookMessage('b', alive, 'b 2', app.clock.now())]);
    const second = await deliver.execute();
    expect(second.delivered.map((m) => m.payload['message'])).to.deep.equal(['b 2']);
    expect((await app.outbox.list('a', 10)).map((m) => m.status)).to.deep.equal(['pending', 'pending']);

    let idle = false;
    const stopped = deliver.idle().then(() => (idle = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(idle, 'idle while a lane still hangs').to.equal(false);
    app.receivers.release();
    const round: DeliveryRound = await first;
    await stopped;
    expect(round.delivered.map((m) => m.payload['message'])).to.deep.equal(['b 1', 'a 1', 'a 2']);
    // One destination's messages went in order, never two at once.
    expect(app.receivers.attempted.filter((m) => m.startsWith('a'))).to.deep.equal(['a 1', 'a 2']);
    expect(app.receivers.maxAtOnceToOne).to.equal(1);
  });

  it('when more destinations hang than the bound, then no more than the bound are sent to at once, and all go out in the end', async () => {
    const app = setUp();
    const urls = Array.from(
      { length: ALERT_DELIVERY_CONCURRENCY + 3 },
      (_, i) => `https://r${i}.example.org/hook`,
    );
    for (const url of urls) app.receivers.hanging.add(url);
    await app.outbox.enqueue(urls.map((url, i) => webhookMessage('a', url, `m${i}`, app.clock.now())));
    const round = app.get(DeliverAlertMessages).execute();
    await settledSoon(
      'the bound to fill',
      () => app.receivers.attempted.length === ALERT_DELIVERY_CONCURRENCY,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(app.receivers.attempted).to.have.length(ALERT_DELIVERY_CONCURRENCY);
    app.receivers.release();
    expect((await round).delivered).to.have.length(urls.length);
    expect(app.receivers.maxAtOnce).to.equal(ALERT_DELIVERY_CONCURRENCY);
  });

  it('when a receiver fails, then its later messages of the round are not tried and stay queued behind it, in order', async () => {
    const app = setUp();
    app.receivers.refusing.add(dead);
    await app.outbox.enqueue([
      webhookMessage('a', dead, 'a 1', app.clock.now()),
      webhookMessage('a', dead, 'a 2', app.clock.now()),
      webhookMessage('b', alive, 'b 1', app.clock.now()),
    ]);
    const deliver = app.get(DeliverAlertMessages);
    const round = await deliver.execute();
    expect(app.receivers.attempted.sort()).to.deep.equal(['a 1', 'b 1']);
    expect(round.delivered.map((m) => m.payload['message'])).to.deep.equal(['b 1']);
    expect(round.retrying.map(({ message, error }) => [message.payload['message'], error])).to.deep.equal([
      ['a 1', 'https://dead.example.org answered 503'],
      [
        'a 2',
        'not tried: an earlier message to this destination failed (https://dead.example.org answered 503)',
      ],
    ]);

    app.receivers.refusing.clear();
    app.clock.advance(60_000);
    const again = await deliver.execute();
    expect(again.delivered.map((m) => m.payload['message'])).to.deep.equal(['a 1', 'a 2']);
  });
});
