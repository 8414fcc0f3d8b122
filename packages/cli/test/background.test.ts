import { expect } from 'chai';
import { IntervalScheduler, startAlertDelivery } from '@hortus/cli';
import { type DeliveryRound, silentLogger } from '@hortus/core';

describe('The scheduler on real timers', () => {
  it('when a long task pauses, then callbacks queued before the pause (requests that arrived) run first', async () => {
    const scheduler = new IntervalScheduler(silentLogger);
    const order: string[] = [];
    setImmediate(() => order.push('request'));
    await scheduler.pause();
    order.push('next group');
    expect(order).to.deep.equal(['request', 'next group']);
  });
});

describe('The alert delivery worker', () => {
  it('when a round hangs on a receiver, then the next ticks still start rounds, and stopping waits for the lanes', async () => {
    const scheduler = new IntervalScheduler(silentLogger);
    const reported: number[] = [];
    let calls = 0;
    let releaseFirst = (): void => undefined;
    let idleWaited = false;
    const delivery = {
      execute: (): Promise<DeliveryRound> => {
        calls += 1;
        const round = { delivered: [], retrying: [], failed: [] };
        if (calls > 1) return Promise.resolve(round);
        return new Promise<DeliveryRound>((resolve) => (releaseFirst = () => resolve(round)));
      },
      idle: async (): Promise<void> => {
        idleWaited = true;
      },
    };
    const worker = startAlertDelivery(scheduler, delivery, silentLogger, 10, () => reported.push(calls));
    for (let waited = 0; reported.length < 2; waited += 1) {
      if (waited > 500) throw new Error('no later round was reported while the first one hung');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    releaseFirst();
    await worker.stop();
    expect(idleWaited).to.equal(true);
  });
});
