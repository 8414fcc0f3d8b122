import {
  AcknowledgeNotification,
  AutomationEngine,
  CreateGroup,
  IgnoreNotifications,
  ListOpenNotifications,
  RecordReadings,
  SCHEDULER,
  type Scheduler,
  SetTopicAlert,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const HUMIDITY = 'esp/air/humidity';
const MINUTE = 60_000;

const byHand: Scheduler = {
  every: () => {
    throw new Error('tests drive ticks by hand');
  },
};

/** Group gh mailing grower@example.org, humidity above 80 a critical alert; the clock at noon. */
async function greenhouse(severity: 'warning' | 'critical' = 'critical'): Promise<TestApp> {
  const app = createTestApp({ now: '2026-06-10T12:00:00Z' });
  app.container.bind<Scheduler>(SCHEDULER).toConstantValue(byHand);
  await app
    .get(CreateGroup)
    .execute({ name: 'gh', settings: [{ emailNotification: true }, { email: 'grower@example.org' }] });
  await app.get(SetTopicAlert).execute({ group: 'gh', topic: HUMIDITY, max: 80, severity });
  return app;
}

async function humidity(app: TestApp, value: number): Promise<void> {
  await app
    .get(RecordReadings)
    .execute([{ group: 'gh', topic: HUMIDITY, value, time: app.clock.now().toISOString() }]);
}

/** Moves the clock on, keeps the reading fresh, ticks, and answers the first lines of what was queued. */
async function later(app: TestApp, minutes: number, value = 91): Promise<string[]> {
  app.clock.set(new Date(app.clock.now().getTime() + minutes * MINUTE));
  await humidity(app, value);
  return (await app.get(AutomationEngine).tick()).queued.map((m) => m.text.split('\n')[0] ?? '');
}

describe('critical alerts', () => {
  it('when a critical alert stays open, then it is sent again every ALERT_REPEAT_MS until acknowledged, and the acknowledgement says who and when', async () => {
    const app = await greenhouse();
    await humidity(app, 91);
    const opened = await app.get(AutomationEngine).tick();
    expect(opened.alerts.map((n) => n.severity)).to.deep.equal(['critical']);
    expect(opened.queued.map((m) => m.payload['severity'])).to.deep.equal(['critical']);

    expect(await later(app, 29), 'before the interval: nothing again').to.deep.equal([]);
    expect(await later(app, 1)).to.deep.equal([
      `Reminder 1, not acknowledged: ${HUMIDITY} is above its maximum of 80 %: 91 % at 2026-06-10 12:00:00 UTC`,
    ]);
    expect(await later(app, 30)).to.deep.equal([
      `Reminder 2, not acknowledged: ${HUMIDITY} is above its maximum of 80 %: 91 % at 2026-06-10 12:00:00 UTC`,
    ]);

    const [open] = await app.get(ListOpenNotifications).execute({ group: 'gh' });
    app.clock.set(new Date(app.clock.now().getTime() + MINUTE));
    const acknowledged = await app
      .get(AcknowledgeNotification)
      .execute({ group: 'gh', id: open?.id, actor: { kind: 'cli', id: 'root' } });
    expect(acknowledged.acknowledged).to.deep.equal({
      at: app.clock.now(),
      by: { kind: 'cli', id: 'root' },
    });

    expect(await later(app, 30), 'acknowledged: no reminder').to.deep.equal([]);
    expect(await later(app, 60)).to.deep.equal([]);
    const [still] = await app.get(ListOpenNotifications).execute({ group: 'gh' });
    expect(still?.ignore, 'acknowledging does not hide it').to.equal('false');
  });

  it('when the group is evaluated only when woken, then the reminder is due at the wake-up the alert asked for', async () => {
    const app = await greenhouse();
    await humidity(app, 91);
    await app.get(AutomationEngine).tick();
    app.clock.set(new Date(app.clock.now().getTime() + 30 * MINUTE));

    // No reading: only the wake-up names the group (readings are 30 minutes old, too old to judge).
    const { queued } = await app.get(AutomationEngine).tick();

    expect(queued.map((m) => m.payload['repeat'])).to.deep.equal([1]);
  });

  it('when a critical alert ends, or is ignored in the original client, then no reminder follows', async () => {
    const ends = await greenhouse();
    await humidity(ends, 91);
    await ends.get(AutomationEngine).tick();
    expect(await later(ends, 10, 70)).to.deep.equal([
      `${HUMIDITY} is back in range: 70 % at 2026-06-10 12:10:00 UTC`,
    ]);
    expect(await later(ends, 30, 70)).to.deep.equal([]);

    const ignored = await greenhouse();
    await humidity(ignored, 91);
    const { alerts } = await ignored.get(AutomationEngine).tick();
    await ignored.get(IgnoreNotifications).execute({ group: 'gh', time: alerts[0]?.time.toISOString() });
    expect(await later(ignored, 30)).to.deep.equal([]);
  });

  it('when an alert is a warning, then it is sent once', async () => {
    const app = await greenhouse('warning');
    await humidity(app, 91);
    expect((await app.get(AutomationEngine).tick()).alerts.map((n) => n.severity)).to.deep.equal(['warning']);

    expect(await later(app, 30)).to.deep.equal([]);
    expect(await later(app, 60)).to.deep.equal([]);
  });

  it('when the notification is unknown, then acknowledging it is a not-found', async () => {
    const app = await greenhouse();

    await expect(
      app.get(AcknowledgeNotification).execute({ group: 'gh', id: 'nope', actor: { kind: 'cli' } }),
    ).to.be.rejectedWith('Notification not found');
  });
});
