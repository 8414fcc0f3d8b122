import { type AlertOutboxRepository, type NewOutboxMessage } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

function message(
  offsetMs: number,
  group = 'gh',
  text = 'Temperature is above its maximum of 30: 31',
): NewOutboxMessage {
  return {
    group,
    event: 'opened',
    channel: { type: 'webhook', url: 'https://hooks.example.org/x', secret: 'a-secret-of-16-chars' },
    subject: `[Hortus] ${group}: ${text}`,
    text,
    payload: { group, event: 'opened', message: text, value: 31, time: at(offsetMs).toISOString() },
    createdAt: at(offsetMs),
  };
}

export function alertOutboxRepositoryContract(name: string, createStore: StoreFactory<'alertOutbox'>): void {
  describe(`${name}: AlertOutboxRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): AlertOutboxRepository => store().alertOutbox;

    it('when a group has no notify settings, then none are found; saved ones come back and replace', async () => {
      expect(await repository().getSettings('gh')).to.equal(undefined);
      const settings = {
        group: 'gh',
        webhooks: [{ url: 'https://hooks.example.org/x', secret: 'a-secret-of-16-chars' }],
        events: ['opened', 'switched'] as const,
      };
      await repository().saveSettings(settings);
      expect(await repository().getSettings('gh')).to.deep.equal(settings);
      await repository().saveSettings({ group: 'gh', webhooks: [], events: [] });
      expect(await repository().getSettings('gh')).to.deep.equal({ group: 'gh', webhooks: [], events: [] });
      expect(await repository().getSettings('other')).to.equal(undefined);
    });

    it('when hooks have a format, then it is stored with each hook and with each message to it', async () => {
      const settings = {
        group: 'gh',
        webhooks: [
          { url: 'https://ntfy.example.org/gh', secret: 'a-secret-of-16-chars', format: 'ntfy' as const },
          { url: 'https://hooks.example.org/x', secret: 'a-secret-of-16-chars' },
        ],
        events: ['opened'] as const,
      };
      await repository().saveSettings(settings);
      expect(await repository().getSettings('gh')).to.deep.equal(settings);
      const channel = {
        type: 'webhook',
        url: 'https://discord.example.org/x',
        secret: 's',
        format: 'discord',
      };
      await repository().enqueue([{ ...message(0), channel: channel as NewOutboxMessage['channel'] }]);
      const [claimed] = await repository().claimDue(at(0), MINUTE, 10);
      expect(claimed?.channel).to.deep.equal(channel);
    });

    it('when messages are enqueued, then they are plain pending data, due at once, listed newest first', async () => {
      const [first] = await repository().enqueue([message(0)]);
      await repository().enqueue([message(MINUTE), message(0, 'other')]);
      expect(first).to.not.equal(undefined);
      expectPlainEntity(first ?? {});
      expect(first).to.deep.include({ status: 'pending', attempts: 0, group: 'gh', event: 'opened' });
      expect(first?.nextAttemptAt.getTime()).to.equal(at(0).getTime());
      const listed = await repository().list('gh', 10);
      expect(listed.map((m) => m.createdAt.getTime())).to.deep.equal([at(MINUTE).getTime(), at(0).getTime()]);
      expect(listed[1]).to.deep.equal(first);
      expect(await repository().list('gh', 0)).to.deep.equal([]);
    });

    it('when pending messages are counted, then due and deferred ones (leased, backing off) are told apart', async () => {
      expect(await repository().countPending(at(0))).to.deep.equal({ due: 0, deferred: 0 });
      const [leased, backingOff, delivered, givenUp] = await repository().enqueue([
        message(0),
        message(0),
        message(0),
        message(0),
      ]);
      await repository().enqueue([message(0, 'other'), message(10 * MINUTE)]);
      await repository().claimDue(at(0), 5 * MINUTE, 4);
      await repository().markFailed(backingOff?.id ?? '', 'refused', at(2 * MINUTE));
      await repository().markDelivered(delivered?.id ?? '', at(0));
      await repository().markFailed(givenUp?.id ?? '', 'refused', undefined);
      expect(leased).to.not.equal(undefined);
      // At 1 min: the other group's is due; the leased one (to 5 min), the backoff (to 2 min) and the future one are not.
      expect(await repository().countPending(at(MINUTE))).to.deep.equal({ due: 1, deferred: 3 });
      expect(await repository().countPending(at(5 * MINUTE))).to.deep.equal({ due: 3, deferred: 1 });
      expect(await repository().countPending(at(10 * MINUTE))).to.deep.equal({ due: 4, deferred: 0 });
    });

    it('when due messages are claimed, then each is leased once (attempts + 1) until the lease ends', async () => {
      await repository().enqueue([message(0), message(MINUTE), message(10 * MINUTE)]);
      const claimed = await repository().claimDue(at(2 * MINUTE), 5 * MINUTE, 10);
      expect(claimed.map((m) => m.createdAt.getTime())).to.deep.equal([
        at(0).getTime(),
        at(MINUTE).getTime(),
      ]);
      expect(claimed.map((m) => m.attempts)).to.deep.equal([1, 1]);
      expect(await repository().claimDue(at(3 * MINUTE), 5 * MINUTE, 10)).to.deep.equal([]);
      // A worker that died with the lease: the message is due again once the lease is over.
      const again = await repository().claimDue(at(7 * MINUTE + 1), 5 * MINUTE, 1);
      expect(again.map((m) => [m.createdAt.getTime(), m.attempts])).to.deep.equal([[at(0).getTime(), 2]]);
    });

    it('when a message is delivered or failed, then its status, error and next attempt are kept', async () => {
      const [a, b, c] = await repository().enqueue([message(0), message(1), message(2)]);
      await repository().claimDue(at(MINUTE), MINUTE, 10);
      await repository().markDelivered(a?.id ?? '', at(2 * MINUTE));
      await repository().markFailed(b?.id ?? '', 'HTTP 500', at(10 * MINUTE));
      await repository().markFailed(c?.id ?? '', 'HTTP 410', undefined);
      const byId = new Map((await repository().list('gh', 10)).map((m) => [m.id, m]));
      expect(byId.get(a?.id ?? '')).to.deep.include({ status: 'delivered', deliveredAt: at(2 * MINUTE) });
      expect(byId.get(a?.id ?? '')).not.to.have.property('lastError');
      expect(byId.get(b?.id ?? '')).to.deep.include({
        status: 'pending',
        lastError: 'HTTP 500',
        attempts: 1,
      });
      expect(byId.get(b?.id ?? '')?.nextAttemptAt.getTime()).to.equal(at(10 * MINUTE).getTime());
      expect(byId.get(c?.id ?? '')).to.deep.include({ status: 'failed', lastError: 'HTTP 410' });
      // Only what may still be sent keeps the webhook's secret.
      const hook = { type: 'webhook', url: 'https://hooks.example.org/x' };
      expect(byId.get(a?.id ?? '')?.channel).to.deep.equal({ ...hook, secret: '' });
      expect(byId.get(b?.id ?? '')?.channel).to.deep.equal({ ...hook, secret: 'a-secret-of-16-chars' });
      expect(byId.get(c?.id ?? '')?.channel).to.deep.equal({ ...hook, secret: '' });
      expect((await repository().claimDue(at(9 * MINUTE), MINUTE, 10)).map((m) => m.id)).to.deep.equal([]);
      expect((await repository().claimDue(at(10 * MINUTE), MINUTE, 10)).map((m) => m.id)).to.deep.equal([
        b?.id,
      ]);
    });

    it('when a webhook is cancelled, then its pending and leased messages of that group are never claimed again and lose the secret', async () => {
      const hookY = {
        type: 'webhook' as const,
        url: 'https://hooks.example.org/y',
        secret: 'another-secret-16-ch',
      };
      const [done, leased, queued, elsewhere, otherGroup] = await repository().enqueue([
        message(0),
        message(1),
        message(2),
        { ...message(3), channel: hookY },
        message(4, 'other'),
      ]);
      expect((await repository().claimDue(at(MINUTE), MINUTE, 1)).map((m) => m.id)).to.deep.equal([done?.id]);
      await repository().markDelivered(done?.id ?? '', at(MINUTE));
      expect((await repository().claimDue(at(MINUTE), MINUTE, 1)).map((m) => m.id)).to.deep.equal([
        leased?.id,
      ]);

      const reason = 'cancelled: the webhook was removed';
      expect(await repository().cancelWebhook('gh', 'https://hooks.example.org/x', reason)).to.equal(2);
      expect(await repository().cancelWebhook('gh', 'https://hooks.example.org/x', reason)).to.equal(0);
      // The worker that still held the lease can neither put it back nor mark it delivered.
      await repository().markFailed(leased?.id ?? '', 'HTTP 500', at(2 * MINUTE));
      await repository().markDelivered(leased?.id ?? '', at(2 * MINUTE));

      const byId = new Map((await repository().list('gh', 10)).map((m) => [m.id, m]));
      for (const id of [leased?.id, queued?.id])
        expect(byId.get(id ?? '')).to.deep.include({
          status: 'cancelled',
          lastError: reason,
          channel: { type: 'webhook', url: 'https://hooks.example.org/x', secret: '' },
        });
      expect(byId.get(done?.id ?? '')?.status).to.equal('delivered');
      expect(byId.get(elsewhere?.id ?? '')).to.deep.include({ status: 'pending', channel: hookY });
      const later = await repository().claimDue(at(60 * MINUTE), MINUTE, 10);
      expect(later.map((m) => m.id).sort()).to.deep.equal([elsewhere?.id, otherGroup?.id].sort());
    });

    it('when a group is forgotten, then its settings go and every pending message of it is cancelled; other groups keep theirs', async () => {
      const settings = {
        group: 'gh',
        webhooks: [{ url: 'https://hooks.example.org/x', secret: 'a-secret-of-16-chars' }],
        events: ['opened'] as const,
      };
      await repository().saveSettings(settings);
      await repository().saveSettings({ ...settings, group: 'other' });
      const email = { type: 'email' as const, to: 'grower@example.org' };
      const [hook, mail, elsewhere] = await repository().enqueue([
        message(0),
        { ...message(1), channel: email },
        message(2, 'other'),
      ]);
      await repository().claimDue(at(MINUTE), MINUTE, 1); // the hook's message is leased

      expect(await repository().forgetGroup('gh', 'cancelled: the group was deleted')).to.equal(2);
      expect(await repository().getSettings('gh')).to.equal(undefined);
      expect(await repository().getSettings('other')).to.deep.equal({ ...settings, group: 'other' });
      await repository().markDelivered(hook?.id ?? '', at(2 * MINUTE));
      const byId = new Map((await repository().list('gh', 10)).map((m) => [m.id, m]));
      expect(byId.get(hook?.id ?? '')).to.deep.include({
        status: 'cancelled',
        lastError: 'cancelled: the group was deleted',
        channel: { type: 'webhook', url: 'https://hooks.example.org/x', secret: '' },
      });
      expect(byId.get(mail?.id ?? '')).to.deep.include({ status: 'cancelled', channel: email });
      const later = await repository().claimDue(at(60 * MINUTE), MINUTE, 10);
      expect(later.map((m) => m.id)).to.deep.equal([elsewhere?.id]);
    });

    it('when two workers claim at once, then no message goes to both', async () => {
      await repository().enqueue([message(0), message(1), message(2), message(3)]);
      const [x, y] = await Promise.all([
        repository().claimDue(at(MINUTE), MINUTE, 10),
        repository().claimDue(at(MINUTE), MINUTE, 10),
      ]);
      const ids = [...x, ...y].map((m) => m.id);
      expect(new Set(ids).size).to.equal(ids.length);
      expect(ids).to.have.length(4);
    });
  });
}
