import { expect } from 'chai';
import { IntervalScheduler } from '@hortus/cli';
import { silentLogger } from '@hortus/core';

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
