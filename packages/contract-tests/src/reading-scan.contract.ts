import { type Reading, type ReadingRepository } from '@hortus/core';
import { GROUP, reading, TOPIC } from './reading-samples.js';
import { at, expect, MINUTE } from './store.js';

const OTHER = 'esp/air/humidity';
const THIRD = 'esp/ground/moisture/1';

async function scanned(
  repository: ReadingRepository,
  topics: readonly string[],
  fromMs: number,
  toMs: number,
  pageSize: number,
): Promise<{ pages: number[]; readings: Reading[] }> {
  const pages: number[] = [];
  const readings: Reading[] = [];
  for await (const page of repository.scanInTimeOrder(
    { group: GROUP, topics, from: at(fromMs), to: at(toMs) },
    pageSize,
  )) {
    pages.push(page.length);
    readings.push(...page);
  }
  return { pages, readings };
}

/** scanInTimeOrder (the backtest's replay). Part of readingRepositoryContract. */
export function readingScanCases(repository: () => ReadingRepository): void {
  describe('scanInTimeOrder', () => {
    it('when several topics interleave, then every reading comes once in time order, equal times in the order of the topics asked', async () => {
      await repository().add([
        ...[0, 2, 4, 6, 8].map((minute) => reading(minute * MINUTE, minute, TOPIC)),
        ...[1, 2, 5, 9].map((minute) => reading(minute * MINUTE, 100 + minute, OTHER)),
        reading(3 * MINUTE, 999, THIRD),
      ]);

      const { pages, readings } = await scanned(repository(), [OTHER, TOPIC], 0, 9 * MINUTE, 3);

      expect(readings.map((r) => [r.time.getTime() - at(0).getTime(), r.topic, r.value])).to.deep.equal([
        [0, TOPIC, 0],
        [MINUTE, OTHER, 101],
        [2 * MINUTE, OTHER, 102],
        [2 * MINUTE, TOPIC, 2],
        [4 * MINUTE, TOPIC, 4],
        [5 * MINUTE, OTHER, 105],
        [6 * MINUTE, TOPIC, 6],
        [8 * MINUTE, TOPIC, 8],
        [9 * MINUTE, OTHER, 109],
      ]);
      expect(pages).to.deep.equal([3, 3, 3]);
    });

    it('when the range is given, then both bounds are inclusive and nothing outside comes', async () => {
      await repository().add([0, 1, 2, 3, 4].map((minute) => reading(minute * MINUTE, minute)));
      await repository().add([reading(2 * MINUTE, 7, TOPIC, 'another-group')]);

      const { readings } = await scanned(repository(), [TOPIC], MINUTE, 3 * MINUTE, 100);

      expect(readings.map((r) => r.value)).to.deep.equal([1, 2, 3]);
      expect(readings.every((r) => r.group === GROUP)).to.equal(true);
    });

    it('when a series is longer than many pages, then it comes whole, in pages of at most the size asked', async () => {
      await repository().add(Array.from({ length: 250 }, (_, index) => reading(index * 1000, index)));

      const { pages, readings } = await scanned(repository(), [TOPIC, OTHER], 0, 250_000, 64);

      expect(readings.map((r) => r.value)).to.deep.equal(Array.from({ length: 250 }, (_, index) => index));
      expect(Math.max(...pages)).to.be.at.most(64);
    });

    it('when no topic is asked or none holds readings in the range, then nothing comes', async () => {
      await repository().add([reading(0, 1)]);

      expect((await scanned(repository(), [], 0, MINUTE, 10)).readings).to.deep.equal([]);
      expect((await scanned(repository(), ['no/such/topic'], 0, MINUTE, 10)).readings).to.deep.equal([]);
      expect((await scanned(repository(), [TOPIC], MINUTE, 2 * MINUTE, 10)).readings).to.deep.equal([]);
    });
  });
}
