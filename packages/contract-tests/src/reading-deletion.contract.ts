import { type ReadingRepository } from '@hortus/core';
import { GROUP, reading, samples, TOPIC } from './reading-samples.js';
import { at, expect, MINUTE } from './store.js';

/**
 * Deleting readings: ranges, the limits and summaries retention uses, and the groups left. Part of
 * readingRepositoryContract, which runs it inside its describe block.
 */
export function readingDeletionCases(repository: () => ReadingRepository): void {
  describe('deleteRange for retention: limit, keepSummaries, groups and deleteSummariesBefore', () => {
    const HOUR = 60 * MINUTE;

    it('when a limit is given, then at most that many go, the oldest first, never past `to`, until none is left', async () => {
      await repository().add([
        reading(0, 1),
        reading(MINUTE, 2),
        reading(2 * MINUTE, 3),
        reading(3 * MINUTE, 4),
        reading(0, 10, 'esp/air/humidity'),
        reading(MINUTE, 11, 'esp/air/humidity'),
        reading(0, 9, TOPIC, 'greenhouse-b'),
      ]);
      const batch = { group: GROUP, from: new Date(-8.64e15), to: at(2 * MINUTE), limit: 2 };

      const counts = [
        await repository().deleteRange(batch),
        await repository().deleteRange(batch),
        await repository().deleteRange(batch),
      ];

      expect(counts).to.deep.equal([2, 2, 1]);
      expect(await repository().deleteRange(batch)).to.equal(0);
      const left = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10);
      expect(samples(left)).to.deep.equal([[at(3 * MINUTE).getTime(), 4]]);
      expect(await repository().latest(GROUP, 'esp/air/humidity')).to.equal(undefined);
      expect(await repository().latest('greenhouse-b', TOPIC)).to.include({ value: 9 });
      // Within one series the oldest went first.
      await repository().add([reading(10 * MINUTE, 5), reading(11 * MINUTE, 6)]);
      await repository().deleteRange({ ...batch, topic: TOPIC, to: at(HOUR), limit: 1 });
      expect(samples(await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10))).to.deep.equal([
        [at(11 * MINUTE).getTime(), 6],
        [at(10 * MINUTE).getTime(), 5],
      ]);
    });

    it('when readings go with keepSummaries and then the summaries before a time, then reads answer only what is left', async () => {
      await repository().add([
        reading(0, 1),
        reading(30 * MINUTE, 3),
        reading(HOUR, 5),
        reading(2 * HOUR, 7),
        reading(3 * HOUR, 9),
      ]);
      const before = await repository().revision(GROUP);

      const removed = await repository().deleteRange({
        group: GROUP,
        from: new Date(-8.64e15),
        to: at(3 * HOUR),
        keepSummaries: true,
        limit: 100,
      });

      expect(removed).to.equal(5);
      expect(await repository().revision(GROUP)).to.not.equal(before);
      expect(await repository().latest(GROUP, TOPIC)).to.equal(undefined);
      expect(await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10)).to.deep.equal([]);
      // Summaries may outlive the readings (a store keeping them answers whole hours from them) until
      // they are deleted; a store keeps them in pieces, so `before` lies well past them here.
      await repository().deleteSummariesBefore(GROUP, at(400 * 24 * HOUR));
      expect(await repository().aggregate({ group: GROUP, topic: TOPIC }, HOUR)).to.deep.equal([]);
    });

    it('when summaries before a time are deleted, then later ones still answer whole-hour buckets', async () => {
      await repository().add([reading(0, 1), reading(2 * HOUR, 7), reading(2 * HOUR + MINUTE, 9)]);

      await repository().deleteSummariesBefore(GROUP, at(HOUR));

      const buckets = await repository().aggregate(
        { group: GROUP, topic: TOPIC, startDate: at(2 * HOUR), endDate: at(3 * HOUR - 1) },
        HOUR,
      );
      expect(buckets.map(({ count, avg }) => [count, avg])).to.deep.equal([[2, 8]]);
    });

    it('when readings of several groups are stored, then groups() lists each once', async () => {
      await repository().add([reading(0, 1), reading(0, 2, 'esp/air/humidity'), reading(0, 3, TOPIC, 'b')]);

      expect((await repository().groups()).sort()).to.deep.equal(['b', GROUP]);
    });
  });

  describe('deleteRange', () => {
    it('when a topic and a time span are given, then exactly the readings of that topic within the inclusive span are removed and counted', async () => {
      await repository().add([
        reading(0, 1),
        reading(MINUTE, 2),
        reading(2 * MINUTE, 3),
        reading(3 * MINUTE, 4),
        reading(MINUTE, 50, 'esp/air/humidity'),
        reading(MINUTE, 9, TOPIC, 'greenhouse-b'),
      ]);

      const deleted = await repository().deleteRange({
        group: GROUP,
        topic: TOPIC,
        from: at(MINUTE),
        to: at(2 * MINUTE),
      });

      expect(deleted).to.equal(2);
      const left = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10);
      expect(samples(left)).to.deep.equal([
        [at(3 * MINUTE).getTime(), 4],
        [at(0).getTime(), 1],
      ]);
      expect(await repository().latest(GROUP, 'esp/air/humidity')).to.include({ value: 50 });
      expect(await repository().latest('greenhouse-b', TOPIC)).to.include({ value: 9 });
    });

    it('when no topic is given, then every topic of the group loses its readings in the span; a topic left empty is gone', async () => {
      await repository().add([
        reading(0, 1),
        reading(10 * MINUTE, 2),
        reading(MINUTE, 50, 'esp/air/humidity'),
      ]);

      const deleted = await repository().deleteRange({ group: GROUP, from: at(0), to: at(5 * MINUTE) });

      expect(deleted).to.equal(2);
      const latest = await repository().latestOfEveryTopic(GROUP);
      expect(latest.map((found) => [found.topic, found.value])).to.deep.equal([[TOPIC, 2]]);
    });

    it('when a future reading hid the real ones, then after it is deleted latest answers the real newest again', async () => {
      const future = new Date(Date.UTC(2099, 0, 1));
      await repository().add([reading(0, 21), { group: GROUP, topic: TOPIC, value: 99, time: future }]);

      await repository().deleteRange({ group: GROUP, topic: TOPIC, from: future, to: future });

      expect(await repository().latest(GROUP, TOPIC)).to.include({ value: 21 });
    });

    it('when readings are removed, then the group revision changes; when nothing matched, it answers 0', async () => {
      await repository().add([reading(0, 1)]);
      const before = await repository().revision(GROUP);

      expect(await repository().deleteRange({ group: GROUP, from: at(0), to: at(0) })).to.equal(1);
      expect(await repository().revision(GROUP)).to.not.equal(before);
      expect(
        await repository().deleteRange({
          group: 'no-such-group',
          topic: TOPIC,
          from: at(0),
          to: at(MINUTE),
        }),
      ).to.equal(0);
    });
  });
}
