import { DueSchedule } from '@hortus/core';
import { expect } from './support.js';

describe('the engine schedule of due groups', () => {
  it('when many groups have times, then takeDue answers exactly those due, each once, and leaves the rest', () => {
    const schedule = new DueSchedule();
    const times = new Map<string, number>();
    for (let index = 0; index < 5000; index += 1) {
      // A fixed scramble of 0..4999, so the heap sees times in no order.
      const at = (index * 7919) % 5000;
      times.set(`g${index}`, at);
      schedule.set(`g${index}`, at);
    }

    const due = schedule.takeDue(2499);
    const again = schedule.takeDue(2499);

    const expected = [...times].filter(([, at]) => at <= 2499).map(([group]) => group);
    expect([...due].sort()).to.deep.equal(expected.sort());
    expect(again).to.deep.equal([]);
    expect(schedule.size).to.equal(2500);
  });

  it('when a group gets a new time or none, then only its latest counts', () => {
    const schedule = new DueSchedule();
    schedule.set('moved-later', 10);
    schedule.set('moved-later', 100);
    schedule.set('moved-earlier', 100);
    schedule.set('moved-earlier', 10);
    schedule.set('cleared', 10);
    schedule.set('cleared', undefined);

    expect(schedule.takeDue(50)).to.deep.equal(['moved-earlier']);
    expect(schedule.takeDue(100)).to.deep.equal(['moved-later']);
    expect(schedule.size).to.equal(0);
  });
});
