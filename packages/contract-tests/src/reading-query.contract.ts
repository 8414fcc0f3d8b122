import { type NewReading, type Reading, type ReadingRepository } from '@hortus/core';
import { GROUP, reading, TOPIC } from './reading-samples.js';
import { at, expect, MINUTE } from './store.js';

/**
 * Reading back: newestFirst, oldest, page (exports) and the topics a group holds. Part of
 * readingRepositoryContract, which runs it inside its describe block.
 */
export function readingQueryCases(repository: () => ReadingRepository): void {
  describe('newestFirst', () => {
    // Built per test: an adapter (or its driver) may decorate what it is given.
    const series = (): NewReading[] =>
      [0, 1, 2, 3, 4, 5].map((minute) => reading(minute * MINUTE, 20 + minute));
    const range = { group: GROUP, topic: TOPIC };

    it('when no filter is given, then it answers the whole series newest first', async () => {
      await repository().add(series().reverse());

      const found = await repository().newestFirst(range, 100);

      expect(found.map((r) => r.value)).to.deep.equal([25, 24, 23, 22, 21, 20]);
    });

    it('when a limit is given, then it answers only that many, the newest ones', async () => {
      await repository().add(series());

      expect((await repository().newestFirst(range, 2)).map((r) => r.value)).to.deep.equal([25, 24]);
      expect(await repository().newestFirst(range, 6)).to.have.lengthOf(6);
    });

    it('when startDate and endDate equal stored times, then both bounds are inclusive', async () => {
      await repository().add(series());

      const found = await repository().newestFirst(
        { ...range, startDate: at(MINUTE), endDate: at(3 * MINUTE) },
        100,
      );

      expect(found.map((r) => r.value)).to.deep.equal([23, 22, 21]);
    });

    it('when startDate and endDate are the same instant, then it answers the reading at that instant', async () => {
      await repository().add(series());

      const found = await repository().newestFirst(
        { ...range, startDate: at(2 * MINUTE), endDate: at(2 * MINUTE) },
        9,
      );

      expect(found.map((r) => r.value)).to.deep.equal([22]);
    });

    it('when bounds fall one millisecond inside stored times, then those readings are excluded', async () => {
      await repository().add(series());

      const found = await repository().newestFirst(
        { ...range, startDate: at(MINUTE + 1), endDate: at(3 * MINUTE - 1) },
        100,
      );

      expect(found.map((r) => r.value)).to.deep.equal([22]);
    });

    it('when only startDate or only endDate is given, then the other side is open', async () => {
      await repository().add(series());

      expect(
        (await repository().newestFirst({ ...range, startDate: at(4 * MINUTE) }, 100)).map((r) => r.value),
      ).to.deep.equal([25, 24]);
      expect(
        (await repository().newestFirst({ ...range, endDate: at(MINUTE) }, 100)).map((r) => r.value),
      ).to.deep.equal([21, 20]);
    });

    it('when minValue and maxValue equal stored values, then both bounds are inclusive', async () => {
      await repository().add(series());

      const found = await repository().newestFirst({ ...range, minValue: 21, maxValue: 23 }, 100);

      expect(found.map((r) => r.value)).to.deep.equal([23, 22, 21]);
    });

    it('when values have different digit counts, then they compare as numbers, never as text', async () => {
      await repository().add([
        reading(0, 9),
        reading(MINUTE, 9.5),
        reading(2 * MINUTE, 10),
        reading(3 * MINUTE, 100),
      ]);

      expect(
        (await repository().newestFirst({ ...range, minValue: 9.5 }, 100)).map((r) => r.value),
      ).to.deep.equal([100, 10, 9.5]);
      expect(
        (await repository().newestFirst({ ...range, maxValue: 10 }, 100)).map((r) => r.value),
      ).to.deep.equal([10, 9.5, 9]);
      expect(
        (await repository().newestFirst({ ...range, minValue: 9.25, maxValue: 9.75 }, 100)).map(
          (r) => r.value,
        ),
      ).to.deep.equal([9.5]);
    });

    it('when values are negative or zero, then they are filtered numerically too', async () => {
      await repository().add([reading(0, -5), reading(MINUTE, 0), reading(2 * MINUTE, 5)]);

      const found = await repository().newestFirst({ ...range, minValue: -1, maxValue: 0 }, 100);

      expect(found.map((r) => r.value)).to.deep.equal([0]);
    });

    it('when value filters and a limit combine, then the limit counts only matching readings', async () => {
      await repository().add(series());

      const found = await repository().newestFirst({ ...range, maxValue: 23 }, 2);

      expect(found.map((r) => r.value)).to.deep.equal([23, 22]);
    });

    it('when all filters combine, then only readings inside every bound are answered', async () => {
      await repository().add(series());

      const found = await repository().newestFirst(
        { ...range, startDate: at(MINUTE), endDate: at(4 * MINUTE), minValue: 22, maxValue: 24 },
        100,
      );

      expect(found.map((r) => r.value)).to.deep.equal([24, 23, 22]);
    });

    it('when nothing lies in the range, then it answers an empty list', async () => {
      await repository().add(series());

      expect(await repository().newestFirst({ ...range, startDate: at(10 * MINUTE) }, 100)).to.deep.equal([]);
      expect(await repository().newestFirst({ ...range, minValue: 1000 }, 100)).to.deep.equal([]);
      expect(await repository().newestFirst({ group: GROUP, topic: 'esp/unknown' }, 100)).to.deep.equal([]);
    });

    it('when other groups and topics have readings in the range, then they are not answered', async () => {
      await repository().add([
        reading(0, 20),
        reading(0, 55, 'esp/air/humidity'),
        reading(MINUTE, 19, TOPIC, 'greenhouse-b'),
      ]);

      const found = await repository().newestFirst(range, 100);

      expect(found.map((r) => [r.group, r.topic, r.value])).to.deep.equal([[GROUP, TOPIC, 20]]);
    });
  });

  describe('oldest', () => {
    const range = { group: GROUP, topic: TOPIC };

    it('when readings lie in the range, then it answers the one with the smallest time', async () => {
      await repository().add([
        reading(3 * MINUTE, 23),
        reading(MINUTE, 21),
        reading(2 * MINUTE, 22),
        reading(0, 20),
      ]);

      const found = await repository().oldest({ ...range, startDate: at(MINUTE), endDate: at(3 * MINUTE) });

      expect(found?.value).to.equal(21);
      expect(found?.time.getTime()).to.equal(at(MINUTE).getTime());
    });

    it('when value filters exclude the earliest readings, then it answers the earliest that matches', async () => {
      await repository().add([
        reading(0, 30),
        reading(MINUTE, 9.5),
        reading(2 * MINUTE, 10),
        reading(3 * MINUTE, 11),
      ]);

      const found = await repository().oldest({ ...range, minValue: 10, maxValue: 20 });

      expect(found?.value).to.equal(10);
    });

    it('when nothing lies in the range, then it answers undefined', async () => {
      await repository().add([reading(0, 20)]);

      expect(await repository().oldest({ ...range, startDate: at(1) })).to.equal(undefined);
      expect(await repository().oldest({ ...range, endDate: at(-1) })).to.equal(undefined);
      expect(await repository().oldest({ group: 'no-such-group', topic: TOPIC })).to.equal(undefined);
    });
  });

  describe('page', () => {
    /** Every page from the start, as (topic, time, value), with the sizes of the pages. */
    const everyPage = async (
      selection: Parameters<ReadingRepository['page']>[0],
      limit: number,
    ): Promise<{ rows: [string, number, number][]; sizes: number[] }> => {
      const rows: [string, number, number][] = [];
      const sizes: number[] = [];
      let after: Reading | undefined;
      for (let guard = 0; guard < 100; guard += 1) {
        const page = await repository().page(selection, after, limit);
        sizes.push(page.length);
        rows.push(...page.map((r): [string, number, number] => [r.topic, r.time.getTime(), r.value]));
        if (page.length < limit) break;
        after = page.at(-1);
      }
      return { rows, sizes };
    };

    it('when a group is paged through, then every reading comes once, by topic then time, in pages of at most the limit', async () => {
      await repository().add([
        reading(2 * MINUTE, 3),
        reading(0, 1),
        reading(MINUTE, 2),
        reading(MINUTE, 10, 'esp/air/humidity'),
        reading(0, 9, 'esp/air/humidity'),
        reading(0, 99, TOPIC, 'greenhouse-b'),
      ]);

      const { rows, sizes } = await everyPage({ group: GROUP }, 2);

      expect(rows).to.deep.equal([
        ['esp/air/humidity', at(0).getTime(), 9],
        ['esp/air/humidity', at(MINUTE).getTime(), 10],
        [TOPIC, at(0).getTime(), 1],
        [TOPIC, at(MINUTE).getTime(), 2],
        [TOPIC, at(2 * MINUTE).getTime(), 3],
      ]);
      expect(sizes).to.deep.equal([2, 2, 1]);
    });

    it('when a topic and inclusive times are given, then only those readings are paged', async () => {
      await repository().add([
        reading(0, 1),
        reading(MINUTE, 2),
        reading(2 * MINUTE, 3),
        reading(3 * MINUTE, 4),
        reading(MINUTE, 10, 'esp/air/humidity'),
      ]);

      const { rows } = await everyPage(
        { group: GROUP, topic: TOPIC, from: at(MINUTE), to: at(2 * MINUTE) },
        1,
      );

      expect(rows.map(([, , value]) => value)).to.deep.equal([2, 3]);
    });

    it('when the group, topic or range holds nothing, or the limit is 0, then it answers an empty page', async () => {
      await repository().add([reading(0, 1)]);

      expect(await repository().page({ group: 'no-such-group' }, undefined, 10)).to.deep.equal([]);
      expect(await repository().page({ group: GROUP, topic: 'esp/none' }, undefined, 10)).to.deep.equal([]);
      expect(await repository().page({ group: GROUP, from: at(MINUTE) }, undefined, 10)).to.deep.equal([]);
      expect(await repository().page({ group: GROUP }, undefined, 0)).to.deep.equal([]);
    });
  });

  describe('countTopics and knownTopics', () => {
    it('when a group holds readings of several topics, then it counts them and names those asked for that it holds', async () => {
      await repository().add([
        reading(0, 1),
        reading(MINUTE, 2),
        reading(0, 50, 'esp/air/humidity'),
        reading(0, 7, 'esp/air/pressure', 'greenhouse-b'),
      ]);

      expect(await repository().countTopics(GROUP)).to.equal(2);
      expect(await repository().countTopics('no-such-group')).to.equal(0);
      const known = await repository().knownTopics(GROUP, ['esp/air/humidity', 'esp/air/pressure', TOPIC]);
      expect([...known].sort()).to.deep.equal(['esp/air/humidity', TOPIC]);
      expect(await repository().knownTopics(GROUP, [])).to.deep.equal([]);
    });

    it('when every reading of a topic is deleted, then the topic is no longer counted nor known', async () => {
      await repository().add([reading(0, 1), reading(0, 50, 'esp/air/humidity')]);

      await repository().deleteRange({ group: GROUP, topic: 'esp/air/humidity', from: at(0), to: at(0) });

      expect(await repository().countTopics(GROUP)).to.equal(1);
      expect(await repository().knownTopics(GROUP, ['esp/air/humidity'])).to.deep.equal([]);
    });
  });
}
