import { expect } from 'chai';
import { Progress } from '@hortus/cli';
import { Capture } from './harness.js';

function clock(): { now: () => number; advance: (ms: number) => void } {
  let time = 1_000_000;
  return { now: () => time, advance: (ms) => (time += ms) };
}

const lines = (capture: Capture): Record<string, unknown>[] =>
  capture.text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the progress display of long commands', () => {
  it('when the total is known and stderr is no terminal, then JSON lines carry percent, rate and ETA, at most one a second', () => {
    const sink = new Capture();
    const time = clock();
    const progress = new Progress(sink, { event: 'copy.progress', unit: 'records', now: time.now });
    progress.start({ label: 'users', total: 1000, fields: { resource: 'users' } });
    progress.update({ done: 0, text: '0 copied', fields: { copied: 0 } });
    time.advance(500);
    progress.update({ done: 100, text: '100 copied', fields: { copied: 100 } }); // within the second: not shown
    time.advance(500);
    progress.update({ done: 250, text: '250 copied', fields: { copied: 250 } });
    time.advance(3000);
    progress.update({ done: 1000, text: '1000 copied', fields: { copied: 1000 } }, true);

    expect(lines(sink)).to.deep.equal([
      { event: 'copy.progress', resource: 'users', copied: 0, total: 1000, percent: 0, perSecond: 0 },
      {
        event: 'copy.progress',
        resource: 'users',
        copied: 250,
        total: 1000,
        percent: 25,
        perSecond: 250,
        etaSeconds: 3,
      },
      {
        event: 'copy.progress',
        resource: 'users',
        copied: 1000,
        total: 1000,
        percent: 100,
        perSecond: 250,
        done: true,
      },
    ]);
  });

  it('when the total is not known, then there is no percent and no ETA, only count and rate', () => {
    const sink = new Capture();
    const time = clock();
    const progress = new Progress(sink, {
      event: 'readings.export.progress',
      unit: 'readings',
      now: time.now,
    });
    time.advance(2000);
    progress.update({ done: 4000, text: '4000 readings exported', fields: { readings: 4000 } }, true);
    expect(lines(sink)).to.deep.equal([
      { event: 'readings.export.progress', readings: 4000, perSecond: 2000, done: true },
    ]);
  });

  it('when stderr is a terminal, then one line is redrawn in place with bar, rate and ETA, and ends with done', () => {
    const terminal = new Capture(true);
    const time = clock();
    const progress = new Progress(terminal, { event: 'x', unit: 'lines', now: time.now });
    progress.start({ label: 'datas', total: 200 });
    time.advance(10_000);
    progress.update({ done: 50, count: 500, text: '500 lines', fields: {} });
    time.advance(30_000);
    progress.update({ done: 200, count: 2000, text: '2000 lines', fields: {} }, true);
    expect(terminal.text).to.equal(
      `\r\u001b[Kdatas         [${'#'.repeat(8)}${'.'.repeat(22)}]  25%  500 lines, 50 lines/s, ETA 30s` +
        `\r\u001b[Kdatas         [${'#'.repeat(30)}] 100%  2000 lines, 50 lines/s, done\n`,
    );
  });
});
