import { createHash } from 'node:crypto';
import {
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  AutomationEngine,
  ConfigureGroupNotify,
  CreateAction,
  CreateGroup,
  DeleteGroup,
  DeliverAlertMessages,
  deliveryBackoffMs,
  InvalidInputError,
  MAX_DELIVERY_ATTEMPTS,
  NotFoundError,
  NOTIFIER,
  type Notifier,
  type OutboxMessage,
  RecordReadings,
  SCHEDULER,
  type Scheduler,
  sensorTopics,
  isMaskedWebhookUrl,
  maskWebhookUrl,
  redactUrl,
  withOriginsOnly,
} from '@hortus/core';
import { sha256Hex } from '@hortus/identity';
import { createTestApp, expect, type TestApp } from './support.js';

/** The outgoing seam: keeps what it is handed, and fails the first `failures` deliveries. */
class RecordingNotifier implements Notifier {
  readonly delivered: OutboxMessage[] = [];
  constructor(private failures = 0) {}
  async deliver(message: OutboxMessage): Promise<void> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('receiver answered 503');
    }
    this.delivered.push(message);
  }
}

const byHand: Scheduler = {
  every: () => {
    throw new Error('tests drive ticks by hand');
  },
};

const hook = { url: 'https://hooks.example.org/gh', secret: 'a-secret-of-16-chars' };

async function greenhouse(
  notifier = new RecordingNotifier(),
  emailSettings: object[] = [{ emailNotification: true }, { email: 'grower@example.org' }],
): Promise<TestApp & { notifier: RecordingNotifier; outbox: AlertOutboxRepository }> {
  const app = createTestApp({ now: '2026-06-10T12:00:00Z' });
  app.container.bind<Notifier>(NOTIFIER).toConstantValue(notifier);
  app.container.bind<Scheduler>(SCHEDULER).toConstantValue(byHand);
  await app.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMax: 30 }, ...emailSettings] });
  return { ...app, notifier, outbox: app.container.get<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY) };
}

async function temperature(app: TestApp, value: number): Promise<void> {
  await app
    .get(RecordReadings)
    .execute([{ group: 'gh', topic: sensorTopics.temperature, value, time: app.clock.now().toISOString() }]);
}

describe('alert delivery', () => {
  it('when e-mail is on in the group settings and a webhook is set, then an alert goes to both, and its end too', async () => {
    const app = await greenhouse();
    await app.get(ConfigureGroupNotify).execute({ group: 'gh', addWebhook: hook });
    await temperature(app, 31);
    const { queued } = await app.get(AutomationEngine).tick();
    expect(queued.map((m) => [m.event, m.channel.type])).to.deep.equal([
      ['opened', 'email'],
      ['opened', 'webhook'],
    ]);
    expect(queued[0]?.channel).to.deep.equal({ type: 'email', to: 'grower@example.org' });
    expect(queued[0]?.subject).to.equal(
      '[Hortus] gh: Temperature (esp/air/temperature) is above its maximum of 30 °C: 31 °C at 2026-06-10 12:00:00 UTC',
    );
    expect(queued[1]?.payload).to.deep.include({
      group: 'gh',
      event: 'opened',
      topic: sensorTopics.temperature,
      value: 31,
    });

    const round = await app.get(DeliverAlertMessages).execute();
    expect(round.delivered).to.have.length(2);
    expect(app.notifier.delivered.map((m) => m.channel.type)).to.deep.equal(['email', 'webhook']);
    expect((await app.outbox.list('gh', 10)).map((m) => m.status)).to.deep.equal(['delivered', 'delivered']);

    app.clock.advance(60_000);
    await temperature(app, 25);
    const back = await app.get(AutomationEngine).tick();
    expect(back.queued.map((m) => m.event)).to.deep.equal(['resolved', 'resolved']);
  });

  it('when the group has a time zone of its own, then the e-mail reads its local time with units, and the webhook payload keeps UTC', async () => {
    const app = await greenhouse(new RecordingNotifier(), [
      { emailNotification: true },
      { email: 'grower@example.org' },
      { timeZone: 'America/New_York' },
    ]);
    await app.get(ConfigureGroupNotify).execute({ group: 'gh', addWebhook: hook });
    await temperature(app, 31);
    const { queued } = await app.get(AutomationEngine).tick();
    const message =
      'Temperature (esp/air/temperature) is above its maximum of 30 °C: 31 °C at 2026-06-10 08:00:00 EDT';
    expect(queued[0]?.text).to.equal(`${message}\n\nGroup: gh\nTime: 2026-06-10 08:00:00 EDT\n`);
    expect(queued[1]?.payload).to.deep.include({ message, time: '2026-06-10T12:00:00.000Z', value: 31 });
  });

  it('when a webhook has a format, then each message to it carries the format to the notifier; json is stored as none', async () => {
    const app = await greenhouse(undefined, []);
    const notify = app.get(ConfigureGroupNotify);
    await notify.execute({ group: 'gh', addWebhook: { ...hook, format: 'ntfy' } });
    await notify.execute({
      group: 'gh',
      addWebhook: { url: 'https://hooks.example.org/plain', secret: hook.secret, format: 'json' },
    });
    await expect(
      notify.execute({ group: 'gh', addWebhook: { ...hook, format: 'teams' } }),
    ).to.be.rejectedWith(InvalidInputError, /format/u);
    await temperature(app, 31);
    const { queued } = await app.get(AutomationEngine).tick();
    expect(queued.map((m) => m.channel)).to.deep.equal([
      { type: 'webhook', url: hook.url, secret: hook.secret, format: 'ntfy' },
      { type: 'webhook', url: 'https://hooks.example.org/plain', secret: hook.secret },
    ]);
  });

  it('when e-mail is off and no webhook is set, then nothing is queued', async () => {
    const app = await greenhouse(undefined, [{ emailNotification: false }, { email: 'grower@example.org' }]);
    await temperature(app, 31);
    const { alerts, queued } = await app.get(AutomationEngine).tick();
    expect(alerts).to.have.length(1);
    expect(queued).to.deep.equal([]);
  });

  it('when the group chose only switches, then rule switches are sent and alerts are not', async () => {
    const app = await greenhouse();
    await app.get(ConfigureGroupNotify).execute({ group: 'gh', events: ['switched'] });
    await app.get(CreateAction).execute({
      group: 'gh',
      object: 'pump_1',
      value: 'off',
      automations: [
        {
          timeAutomations: [],
          sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28' }],
        },
      ],
    });
    await temperature(app, 31);
    const { queued } = await app.get(AutomationEngine).tick();
    expect(queued.map((m) => [m.event, m.text.split('\n')[0]])).to.deep.equal([
      ['switched', 'pump_1 switched off -> on by temperature above 28 -> on'],
    ]);
  });

  it('when a value flaps across its bound for an hour, then at most one "opened" message goes out per 15 minutes', async () => {
    const app = await greenhouse();
    const engine = app.get(AutomationEngine);
    const opened: OutboxMessage[] = [];
    for (let minute = 0; minute < 60; minute += 1) {
      await temperature(app, minute % 2 === 0 ? 31 : 25);
      for (const message of (await engine.tick()).queued)
        if (message.event === 'opened') opened.push(message);
      app.clock.advance(60_000);
    }
    const times = opened.map((m) => m.createdAt.getTime());
    expect(times.length).to.be.within(1, 4);
    for (let i = 1; i < times.length; i += 1)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).to.be.at.least(15 * 60_000);
  });

  it('when delivery fails, then it is retried after a growing backoff, and given up after the last attempt', async () => {
    const app = await greenhouse(new RecordingNotifier(2), [
      { emailNotification: true },
      { email: 'grower@example.org' },
    ]);
    await temperature(app, 31);
    await app.get(AutomationEngine).tick();
    const deliver = app.get(DeliverAlertMessages);

    expect((await deliver.execute()).retrying).to.have.length(1);
    expect((await deliver.execute()).retrying).to.have.length(0); // not due yet
    app.clock.advance(deliveryBackoffMs(1));
    expect((await deliver.execute()).retrying).to.have.length(1);
    app.clock.advance(deliveryBackoffMs(2) - 1);
    expect((await deliver.execute()).delivered).to.have.length(0);
    app.clock.advance(1);
    const third = await deliver.execute();
    expect(third.delivered.map((m) => m.attempts)).to.deep.equal([3]);
    expect(app.notifier.delivered).to.have.length(1);

    const never = await greenhouse(new RecordingNotifier(1_000));
    await temperature(never, 31);
    await never.get(AutomationEngine).tick();
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt += 1) {
      await never.get(DeliverAlertMessages).execute();
      never.clock.advance(deliveryBackoffMs(attempt));
    }
    const [message] = await never.outbox.list('gh', 1);
    expect(message).to.deep.include({
      status: 'failed',
      attempts: MAX_DELIVERY_ATTEMPTS,
      lastError: 'receiver answered 503',
    });
  });

  it('when a webhook is removed, then what was queued for it is cancelled, keeps no secret and is never sent', async () => {
    const app = await greenhouse(new RecordingNotifier(1));
    const other = { url: 'https://hooks.example.org/other', secret: 'another-secret-of-16' };
    await app.get(ConfigureGroupNotify).execute({ group: 'gh', addWebhook: hook });
    await app.get(ConfigureGroupNotify).execute({ group: 'gh', addWebhook: other });
    await temperature(app, 31);
    await app.get(AutomationEngine).tick();
    const deliver = app.get(DeliverAlertMessages);
    expect((await deliver.execute()).retrying).to.have.length(1); // the e-mail failed once; both hooks went
    app.clock.advance(60_000);
    await temperature(app, 25);
    await app.get(AutomationEngine).tick(); // "resolved" queued for e-mail and both hooks

    const view = await app.get(ConfigureGroupNotify).execute({ group: 'gh', removeWebhook: hook.url });
    expect(view.cancelled).to.equal(1);
    expect(view.webhooks.map((h) => h.url)).to.deep.equal([other.url]);
    app.clock.advance(deliveryBackoffMs(10));
    const round = await deliver.execute();
    expect(round.delivered.map((m) => [m.event, m.channel.type])).to.have.deep.members([
      ['opened', 'email'],
      ['resolved', 'email'],
      ['resolved', 'webhook'],
    ]);
    expect(app.notifier.delivered.filter((m) => m.channel.type === 'webhook' && m.event === 'resolved'))
      .to.have.length(1)
      .and.to.satisfy((sent: OutboxMessage[]) =>
        sent.every((m) => m.channel.type === 'webhook' && m.channel.url === other.url),
      );
    const cancelled = (await app.outbox.list('gh', 10)).filter((m) => m.status === 'cancelled');
    expect(cancelled.map((m) => [m.event, m.channel])).to.deep.equal([
      ['resolved', { type: 'webhook', url: hook.url, secret: '' }],
    ]);
  });

  it('when two hooks on one host are listed, then their masked forms differ and remove takes either unambiguously', async () => {
    const app = await greenhouse();
    const configure = app.get(ConfigureGroupNotify);
    const seedlings = { url: 'https://ntfy.example.org/seedlings', secret: hook.secret };
    await configure.execute({
      group: 'gh',
      addWebhook: { ...hook, url: 'https://ntfy.example.org/greenhouse' },
    });
    const listed = await configure.execute({ group: 'gh', addWebhook: seedlings });
    const [greenhouseHook, seedlingsHook] = listed.webhooks.map((h) => h.masked);
    expect(greenhouseHook).to.match(/^https:\/\/ntfy\.example\.org\/… #[0-9a-f]{6}$/u);
    expect(seedlingsHook).to.not.equal(greenhouseHook);

    const after = await configure.execute({ group: 'gh', removeWebhook: ` ${greenhouseHook ?? ''} ` });
    expect(after.webhooks.map((h) => h.url)).to.deep.equal([seedlings.url]);
    await expect(configure.execute({ group: 'gh', removeWebhook: greenhouseHook ?? '' })).to.be.rejectedWith(
      NotFoundError,
      new RegExp(`no webhook ${(greenhouseHook ?? '').replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&')}$`, 'u'),
    );
  });

  it('when a group is deleted, then its queued messages are cancelled and a new group of that name does not feed its webhooks', async () => {
    const app = await greenhouse();
    await app.get(ConfigureGroupNotify).execute({ group: 'gh', addWebhook: hook });
    await temperature(app, 31);
    expect((await app.get(AutomationEngine).tick()).queued).to.have.length(2);
    await app.get(DeleteGroup).execute({ group: 'gh', confirm: true });
    expect((await app.outbox.list('gh', 10)).map((m) => m.status)).to.deep.equal(['cancelled', 'cancelled']);

    await app.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    expect((await app.get(ConfigureGroupNotify).execute({ group: 'gh' })).webhooks).to.deep.equal([]);
    app.clock.advance(60_000);
    await temperature(app, 32);
    expect((await app.get(AutomationEngine).tick()).queued).to.deep.equal([]);
    expect((await app.get(DeliverAlertMessages).execute()).delivered).to.deep.equal([]);
    expect(app.notifier.delivered).to.deep.equal([]);
  });

  it('when notify settings are bad, then they are refused with the field named; a missing group is not found', async () => {
    const app = await greenhouse();
    const configure = app.get(ConfigureGroupNotify);
    await expect(
      configure.execute({ group: 'gh', addWebhook: { url: 'ftp://x.org/', secret: hook.secret } }),
    ).to.be.rejectedWith(InvalidInputError, /url/u);
    await expect(
      configure.execute({ group: 'gh', addWebhook: { url: hook.url, secret: 'short' } }),
    ).to.be.rejectedWith(InvalidInputError);
    await expect(configure.execute({ group: 'gh', events: ['opened', 'everything'] })).to.be.rejectedWith(
      InvalidInputError,
      /everything/u,
    );
    await expect(configure.execute({ group: 'gh', removeWebhook: hook.url })).to.be.rejectedWith(
      NotFoundError,
    );
    await expect(configure.execute({ group: 'nobody' })).to.be.rejectedWith(NotFoundError);
    expect(await configure.execute({ group: 'gh' })).to.deep.equal({
      group: 'gh',
      webhooks: [],
      events: ['opened', 'resolved', 'no-data'],
      email: 'grower@example.org',
    });
  });
});

describe('webhook URLs out of sight', () => {
  it('when a hook URL is logged or listed, then only its origin shows, listed with a digest of the whole URL', () => {
    expect(redactUrl('https://u:p@hooks.example.org:8443/x/T0KEN?k=v')).to.equal(
      'https://***@hooks.example.org:8443',
    );
    expect(redactUrl('not a url')).to.equal('an unparsable URL');
    const masked = (url: string): string => maskWebhookUrl(url, sha256Hex);
    const first6 = (url: string): string => createHash('sha256').update(url).digest('hex').slice(0, 6);
    expect(masked('https://ntfy.example.org')).to.equal('https://ntfy.example.org');
    // Two paths on one host used to show alike; the path itself (the ntfy topic, a token) stays hidden.
    expect(masked('https://ntfy.example.org/greenhouse')).to.equal(
      `https://ntfy.example.org/… #${first6('https://ntfy.example.org/greenhouse')}`,
    );
    expect(masked('https://ntfy.example.org/greenhouse')).to.not.equal(
      masked('https://ntfy.example.org/seedlings'),
    );
    expect(masked('https://u:p@ntfy.example.org/')).to.match(
      /^https:\/\/ntfy\.example\.org\/… #[0-9a-f]{6}$/u,
    );
    expect(masked('https://hooks.example.org/services/T0/B1/xyz123')).to.not.contain('z123');
    expect(isMaskedWebhookUrl(masked('https://ntfy.example.org/gh'))).to.equal(true);
    expect(isMaskedWebhookUrl('https://ntfy.example.org/gh')).to.equal(false);
    expect(withOriginsOnly('Request timed out: POST http://127.0.0.1:9/hook/T0KEN?k=v (after 1 s)')).to.equal(
      'Request timed out: POST http://127.0.0.1:9 (after 1 s)',
    );
  });
});
