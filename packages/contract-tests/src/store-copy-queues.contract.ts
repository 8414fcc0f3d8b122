import {
  type AutomationEvent,
  type NewAutomationEvent,
  type NewOutboxMessage,
  type OutboxMessage,
  type PendingDevice,
} from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

/** Records as another store issued them: 24-hex ids, which every store keeps. */
const queued: OutboxMessage = {
  id: '65a1b2c3d4e5f60718293b01',
  group: 'greenhouse-a',
  event: 'opened',
  channel: { type: 'webhook', url: 'https://hooks.example.org/x', secret: 'a-secret-of-16-chars' },
  subject: '[Hortus] greenhouse-a: too warm',
  text: 'too warm',
  payload: { group: 'greenhouse-a', value: 31, late: false, note: null },
  createdAt: at(0),
  status: 'pending',
  attempts: 2,
  nextAttemptAt: at(5 * MINUTE),
  lastError: 'HTTP 502',
};

const delivered: OutboxMessage = {
  id: '65a1b2c3d4e5f60718293b02',
  group: 'greenhouse-a',
  event: 'resolved',
  channel: { type: 'email', to: 'ana@example.com' },
  subject: '[Hortus] greenhouse-a: back in range',
  text: 'back in range',
  payload: {},
  createdAt: at(MINUTE),
  status: 'delivered',
  attempts: 1,
  nextAttemptAt: at(MINUTE),
  deliveredAt: at(2 * MINUTE),
};

const switched: AutomationEvent = {
  id: '65a1b2c3d4e5f60718293b03',
  group: 'greenhouse-a',
  object: 'pump',
  value: 'on',
  previousValue: 'off',
  at: at(0),
  trigger: 'time',
  rule: '06:00 every day -> on',
  slot: at(-MINUTE),
  late: true,
};

const box: PendingDevice = {
  boxId: 'nexabox-7',
  mac: '24:6F:28:6A:00:07',
  firstSeenAt: at(0),
  lastSeenAt: at(3 * MINUTE),
  firmwareVersion: '1.2.3',
  address: '192.0.2.7',
  attempts: 4,
  wantedBy: 'greenhouse-b',
};

function message(offsetMs: number, group: string): NewOutboxMessage {
  return {
    group,
    event: 'opened',
    channel: { type: 'email', to: 'ana@example.com' },
    subject: `[Hortus] ${group}`,
    text: `alert ${offsetMs}`,
    payload: { group },
    createdAt: at(offsetMs),
  };
}

function event(offsetMs: number, group: string): NewAutomationEvent {
  return {
    group,
    object: 'fan',
    value: offsetMs % (2 * MINUTE) === 0 ? 'on' : 'off',
    previousValue: 'off',
    at: at(offsetMs),
    trigger: 'sensor',
    rule: 'temperature above 28 -> on',
    reading: { topic: 'temperature', value: 28.5, time: at(offsetMs - 1000) },
  };
}

/** Walks a listing page by page as `hortus store copy` does, after the last id of each page. */
async function everyPage<T extends { readonly id: string }>(
  list: (after: string | undefined, limit: number) => Promise<T[]>,
  limit: number,
): Promise<T[]> {
  const all: T[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await list(after, limit);
    expect(page.length).to.be.at.most(limit);
    all.push(...page);
    const last = page[page.length - 1];
    if (last === undefined || page.length < limit) return all;
    after = last.id;
  }
}

/** The outbox, the automation log and pending boxes as `hortus store copy` reads and writes them. */
export function storeCopyQueuesContract(
  name: string,
  createStore: StoreFactory<'alertOutbox' | 'automationLog' | 'devices'>,
): void {
  describe(`${name}: copying the outbox, the automation log and pending boxes (hortus store copy)`, () => {
    const store = freshStorePerTest(createStore);

    it('when the outbox is listed for a copy page by page, then every message of every group comes once, whatever its status, each group in the order queued', async () => {
      const [first] = await store().alertOutbox.enqueue([message(0, 'b')]);
      await store().alertOutbox.enqueue([message(MINUTE, 'a'), message(2 * MINUTE, 'b')]);
      await store().alertOutbox.enqueue([message(3 * MINUTE, 'a')]);
      await store().alertOutbox.markDelivered(first?.id ?? '', at(4 * MINUTE));

      const copies = await everyPage((after, limit) => store().alertOutbox.listCopies(after, limit), 2);

      const texts = (group: string): string[] =>
        copies.filter((copy) => copy.group === group).map((copy) => copy.text);
      expect(copies).to.have.length(4);
      expect(texts('a')).to.deep.equal([`alert ${MINUTE}`, `alert ${3 * MINUTE}`]);
      expect(texts('b')).to.deep.equal(['alert 0', `alert ${2 * MINUTE}`]);
      expect(copies.find((copy) => copy.id === first?.id)?.status).to.equal('delivered');
      expect(await store().alertOutbox.listCopies(undefined, 0)).to.deep.equal([]);
    });

    it('when outbox messages are restored twice, then each is held once as it was: id, status, attempts, times, error and secret', async () => {
      await store().alertOutbox.restore([queued, delivered]);
      await store().alertOutbox.restore([queued]);
      await store().alertOutbox.restore([]);

      expect(await store().alertOutbox.listCopies(undefined, 10)).to.deep.equal([queued, delivered]);
      expect(await store().alertOutbox.list('greenhouse-a', 10)).to.have.deep.members([queued, delivered]);
    });

    it('when a pending message is restored, then it is delivered from the store it was copied into, after its due time', async () => {
      await store().alertOutbox.restore([queued]);

      expect(await store().alertOutbox.claimDue(at(MINUTE), 60_000, 10)).to.deep.equal([]);
      const [claimed] = await store().alertOutbox.claimDue(at(6 * MINUTE), 60_000, 10);

      expect(claimed?.id).to.equal(queued.id);
      expect(claimed?.attempts).to.equal(queued.attempts + 1);
    });

    it('when a restored message has the id of one held, then it replaces it (its later state wins)', async () => {
      await store().alertOutbox.restore([queued]);

      await store().alertOutbox.restore([{ ...delivered, id: queued.id }]);

      expect(await store().alertOutbox.listCopies(undefined, 10)).to.deep.equal([
        { ...delivered, id: queued.id },
      ]);
    });

    it('when the automation log is listed for a copy page by page, then every event of every group comes once, each group in the order recorded', async () => {
      for (const offset of [0, 1, 2, 3, 4]) {
        await store().automationLog.record(event(offset * MINUTE, offset % 2 === 0 ? 'b' : 'a'));
      }

      const copies = await everyPage((after, limit) => store().automationLog.listCopies(after, limit), 2);

      const times = (group: string): number[] =>
        copies.filter((copy) => copy.group === group).map((copy) => copy.at.getTime());
      expect(copies).to.have.length(5);
      expect(new Set(copies.map((copy) => copy.id)).size).to.equal(5);
      expect(times('a')).to.deep.equal([at(MINUTE), at(3 * MINUTE)].map((date) => date.getTime()));
      expect(times('b')).to.deep.equal([0, 2, 4].map((minutes) => at(minutes * MINUTE).getTime()));
    });

    it('when automation events are restored twice, then the first adds them as they were (id, slot, lateness, reading) and the second adds only what is missing', async () => {
      const recorded = await store().automationLog.record(event(-5 * MINUTE, 'greenhouse-a'));
      const withReading: AutomationEvent = { ...event(6 * MINUTE, 'b'), id: '65a1b2c3d4e5f60718293b04' };

      expect(await store().automationLog.restore([switched])).to.equal(1);
      expect(await store().automationLog.restore([switched, withReading])).to.equal(1);
      expect(await store().automationLog.restore([])).to.equal(0);

      // Which of the two lists first is each store's own order (MongoDB's follows the ids).
      expect(await store().automationLog.listByGroup('greenhouse-a', 10)).to.have.deep.members([
        switched,
        recorded,
      ]);
      expect(await store().automationLog.listByGroup('b', 10)).to.deep.equal([withReading]);
      expect(await store().automationLog.listCopies(undefined, 10)).to.have.length(3);
    });

    it('when a pending box is restored twice, then it is listed once as it was, whatever the cap', async () => {
      await store().devices.recordPending({ boxId: 'other', address: '192.0.2.9', at: at(0) }, 1);

      await store().devices.restorePending(box);
      await store().devices.restorePending(box);

      expect(await store().devices.listPending()).to.deep.equal([
        box,
        { boxId: 'other', address: '192.0.2.9', firstSeenAt: at(0), lastSeenAt: at(0), attempts: 1 },
      ]);
    });

    it('when a pending box with that boxId is held, then the restored one replaces it', async () => {
      await store().devices.recordPending(
        { boxId: box.boxId, address: '198.51.100.1', at: at(9 * MINUTE) },
        5,
      );

      await store().devices.restorePending(box);

      expect(await store().devices.listPending()).to.deep.equal([box]);
    });
  });
}
