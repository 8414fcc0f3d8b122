import { BucketSums, planRollupPieces, rollupLevelsFor } from '@hortus/core';
import { expect } from './support.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const hours = { name: 'hours', unitMs: HOUR };
const minutes = { name: 'minutes', unitMs: MINUTE };

/** Pieces as [from, to, level name or 'readings'], in order. */
function plan(from: number, to: number): [number, number, string][] {
  return planRollupPieces(from, to, [hours, minutes]).map((piece) => [
    piece.from,
    piece.to,
    piece.level?.name ?? 'readings',
  ]);
}

describe('rollup planning and bucket sums (shared by every store)', () => {
  it('when a range has ragged edges, then whole hours come from hours, whole minutes at either edge from minutes, the rest from readings, left to right', () => {
    expect(plan(HOUR - 90_000, 3 * HOUR + 2 * MINUTE + 5_000)).to.deep.equal([
      [HOUR - 90_000, HOUR - MINUTE, 'readings'],
      [HOUR - MINUTE, HOUR, 'minutes'],
      [HOUR, 3 * HOUR, 'hours'],
      [3 * HOUR, 3 * HOUR + 2 * MINUTE, 'minutes'],
      [3 * HOUR + 2 * MINUTE, 3 * HOUR + 2 * MINUTE + 5_000, 'readings'],
    ]);
  });

  it('when the range is open at both ends, then one piece of the coarsest level covers it', () => {
    expect(plan(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY)).to.deep.equal([
      [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY, 'hours'],
    ]);
  });

  it('when no whole unit fits, or the range is empty, then only readings, or nothing, are asked', () => {
    expect(plan(10_000, 50_000)).to.deep.equal([[10_000, 50_000, 'readings']]);
    expect(plan(HOUR, HOUR)).to.deep.equal([]);
  });

  it('when a bucket is not a whole number of a unit, or a value filter applies, then that level is not used', () => {
    expect(rollupLevelsFor([hours, minutes], 90 * MINUTE, false)).to.deep.equal([minutes]);
    expect(rollupLevelsFor([hours, minutes], 2 * HOUR, false)).to.deep.equal([hours, minutes]);
    expect(rollupLevelsFor([hours, minutes], 30_000, false)).to.deep.equal([]);
    expect(rollupLevelsFor([hours, minutes], 2 * HOUR, true)).to.deep.equal([]);
  });

  it('when readings and summed cells fall into buckets, then each bucket answers min, max, avg and count, newest first', () => {
    const sums = new BucketSums(5 * MINUTE);
    sums.addValue(-1, 4);
    sums.addValue(0, 10);
    sums.add(MINUTE, { n: 2, s: 30, lo: 12, hi: 18 });
    sums.addValue(2 * MINUTE, 2);
    sums.addValue(11 * MINUTE, 7);

    expect(
      sums.newestFirst().map(({ time, min, max, avg, count }) => [time.getTime(), min, max, avg, count]),
    ).to.deep.equal([
      [10 * MINUTE, 7, 7, 7, 1],
      [0, 2, 18, 42 / 4, 4],
      [-5 * MINUTE, 4, 4, 4, 1],
    ]);
  });

  it('when a zeroed cell (count 0) is summed into, then it takes the added sum as it is', () => {
    const sums = new BucketSums(MINUTE);
    sums.add(0, { n: 0, s: 0, lo: 0, hi: 0 });
    sums.add(0, { n: 1, s: -3, lo: -3, hi: -3 });

    expect([...sums.entries()]).to.deep.equal([[0, { n: 1, s: -3, lo: -3, hi: -3 }]]);
  });
});
