import { createMemoryStore, type MemoryStore } from '@hortus/adapter-memory';
import { type CopiedResource, type CopyProgress, CopyStore, type StoreCopyReport } from '@hortus/core';
import { expect } from './support.js';

const MINUTE = 60_000;
const at = (offset: number): Date => new Date(Date.UTC(2024, 4, 1, 12) + offset);

/** A source holding the queues the copy once forgot: outbox messages, automation events, pending boxes. */
async function filledSource(): Promise<MemoryStore> {
  const store = createMemoryStore();
  await store.groups.create({ name: 'gh', package: 'small', employee: [], settings: [] });
  const messages = await store.alertOutbox.enqueue(
    [0, 1, 2].map((minute) => ({
      group: 'gh',
      event: 'opened' as const,
      channel: {
        type: 'webhook' as const,
        url: 'https://hooks.example.org/x',
        secret: 'a-secret-of-16-chars',
      },
      subject: `alert ${minute}`,
      text: `alert ${minute}`,
      payload: { minute },
      createdAt: at(minute * MINUTE),
    })),
  );
  await store.alertOutbox.markDelivered(messages[0]?.id ?? '', at(3 * MINUTE));
  for (let minute = 0; minute < 5; minute += 1) {
    await store.automationLog.record({
      group: 'gh',
      object: 'pump',
      value: minute % 2 === 0 ? 'on' : 'off',
      previousValue: minute % 2 === 0 ? 'off' : 'on',
      at: at(minute * MINUTE),
      trigger: 'time',
      rule: `slot ${minute}`,
      slot: at(minute * MINUTE),
    });
  }
  await store.devices.recordPending({ boxId: 'box-1', address: '192.0.2.1', at: at(0) }, 10);
  await store.devices.recordPending({ boxId: 'box-2', address: '192.0.2.2', at: at(MINUTE) }, 10);
  return store;
}

function entry(report: StoreCopyReport, resource: CopiedResource): StoreCopyReport['resources'][number] {
  const found = report.resources.find((candidate) => candidate.resource === resource);
  if (found === undefined) throw new Error(`no report entry for ${resource}`);
  return found;
}

class RecordedProgress implements CopyProgress {
  readonly totals = new Map<CopiedResource, number | undefined>();
  readonly advanced = new Map<CopiedResource, number>();
  private current: CopiedResource | undefined;

  begin(resource: CopiedResource, total: number | undefined): void {
    this.current = resource;
    this.totals.set(resource, total);
  }

  advance(count: number): void {
    if (this.current !== undefined) {
      this.advanced.set(this.current, (this.advanced.get(this.current) ?? 0) + count);
    }
  }

  end(): void {
    this.current = undefined;
  }
}

describe('CopyStore: the outbox, the automation log and pending boxes', () => {
  it('when a store is copied, then its outbox messages, automation events and pending boxes are on the target as they were, counted and shown in progress', async () => {
    const source = await filledSource();
    const target = createMemoryStore();
    const progress = new RecordedProgress();

    const report = await new CopyStore(source, target, { pageSize: 2, force: false }).execute(progress);

    expect(report.complete).to.equal(true);
    for (const [resource, count] of [
      ['outbox', 3],
      ['automationLog', 5],
      ['pendingBoxes', 2],
    ] as const) {
      expect(entry(report, resource), resource).to.include({ source: count, target: count, written: count });
      expect(progress.totals.get(resource), resource).to.equal(count);
      expect(progress.advanced.get(resource), resource).to.equal(count);
    }
    expect(await target.alertOutbox.listCopies(undefined, 10)).to.deep.equal(
      await source.alertOutbox.listCopies(undefined, 10),
    );
    expect(await target.automationLog.listByGroup('gh', 10)).to.deep.equal(
      await source.automationLog.listByGroup('gh', 10),
    );
    expect(await target.devices.listPending()).to.deep.equal(await source.devices.listPending());
  });

  it('when the copy is stopped within the automation log, then a second run completes it without adding any event twice', async () => {
    const source = await filledSource();
    const target = createMemoryStore();
    let pages = 0;
    const progress = new RecordedProgress();
    const stopInLog: CopyProgress = {
      begin: (resource, total) => progress.begin(resource, total),
      advance: (count) => {
        progress.advance(count);
        if (progress.totals.has('automationLog')) pages += 1;
      },
      end: () => progress.end(),
    };

    const first = await new CopyStore(source, target, {
      pageSize: 2,
      force: false,
      // The first page of the log (2 of 5 events) is written, then the stop is asked for.
      stopRequested: () => pages >= 1,
    }).execute(stopInLog);
    const second = await new CopyStore(source, target, { pageSize: 2, force: false }).execute();

    expect(first).to.include({ interrupted: true, complete: false });
    expect(entry(first, 'automationLog')).to.include({ complete: false, written: 2 });
    expect(second).to.include({ interrupted: false, complete: true });
    expect(entry(second, 'automationLog')).to.include({ source: 5, target: 5, written: 3 });
    expect(await target.automationLog.listByGroup('gh', 10)).to.deep.equal(
      await source.automationLog.listByGroup('gh', 10),
    );
    expect(await target.alertOutbox.listCopies(undefined, 10)).to.have.length(3);
  });
});
