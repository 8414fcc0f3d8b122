import { type Reading, type ReadingRepository } from '@hortus/core';
import { readingDeletionCases } from './reading-deletion.contract.js';
import { readingQueryCases } from './reading-query.contract.js';
import { readingScanCases } from './reading-scan.contract.js';
import { GROUP, reading, samples, TOPIC } from './reading-samples.js';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

export function readingRepositoryContract(name: string, createStore: StoreFactory<'readings'>): void {
  describe(`${name}: ReadingRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): ReadingRepository => store().readings;

    describe('add', () => {
      it('when new readings are added, then it answers how many were stored and they can be read back', async () => {
        const stored = await repository().add([reading(0, 21.5), reading(MINUTE, 22)]);

        expect(stored).to.equal(2);
        const found = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10);
        expect(samples(found)).to.deep.equal([
          [at(MINUTE).getTime(), 22],
          [at(0).getTime(), 21.5],
        ]);
      });

      it('when a reading is read back, then it is plain data with its group, topic, numeric value and a Date', async () => {
        await repository().add([reading(0, 21.5)]);

        const found = await repository().latest(GROUP, TOPIC);

        expect(found).to.not.equal(undefined);
        expectPlainEntity(found as Reading);
        expect(found).to.include({ group: GROUP, topic: TOPIC, value: 21.5 });
        expect(found?.time).to.be.an.instanceOf(Date);
        expect(found?.time.getTime()).to.equal(at(0).getTime());
      });

      it('when readings are added, then each gets its own id', async () => {
        await repository().add([reading(0, 1), reading(MINUTE, 2), reading(0, 3, 'esp/air/humidity')]);

        const ids = [
          ...(await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10)),
          ...(await repository().newestFirst({ group: GROUP, topic: 'esp/air/humidity' }, 10)),
        ].map((found) => found.id);
        expect(new Set(ids).size).to.equal(3);
      });

      it('when a delivery is retried with the same group, topic and time, then it is skipped and the first value kept', async () => {
        await repository().add([reading(0, 20), reading(MINUTE, 21)]);

        const stored = await repository().add([reading(0, 99), reading(2 * MINUTE, 22)]);

        expect(stored).to.equal(1);
        const found = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10);
        expect(samples(found)).to.deep.equal([
          [at(2 * MINUTE).getTime(), 22],
          [at(MINUTE).getTime(), 21],
          [at(0).getTime(), 20],
        ]);
      });

      it('when one batch holds the same group, topic and time twice, then it is stored once', async () => {
        const stored = await repository().add([reading(0, 20), reading(0, 20)]);

        expect(stored).to.equal(1);
        expect(await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10)).to.have.lengthOf(1);
      });

      it('when the same time arrives for another topic or another group, then it is not a duplicate', async () => {
        const stored = await repository().add([
          reading(0, 20),
          reading(0, 55, 'esp/air/humidity'),
          reading(0, 19, TOPIC, 'greenhouse-b'),
        ]);

        expect(stored).to.equal(3);
      });

      it('when the same reading is added by ten concurrent calls, then exactly one stores it', async () => {
        const counts = await Promise.all(
          Array.from({ length: 10 }, () => repository().add([reading(0, 20)])),
        );

        expect(counts.reduce((sum, count) => sum + count, 0)).to.equal(1);
        expect(await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10)).to.have.lengthOf(1);
      });

      it('when distinct readings are added by concurrent calls, then every one is stored', async () => {
        const counts = await Promise.all(
          Array.from({ length: 20 }, (_, i) => repository().add([reading(i * MINUTE, i)])),
        );

        expect(counts.reduce((sum, count) => sum + count, 0)).to.equal(20);
        const found = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 100);
        expect(found.map((r) => r.value)).to.deep.equal(Array.from({ length: 20 }, (_, i) => 19 - i));
      });

      it('when concurrent calls mix new readings with stored ones, then each is answered for its own, and latest sees the new', async () => {
        await repository().add([reading(0, 20)]);

        const counts = await Promise.all([
          repository().add([reading(0, 21)]),
          repository().add([reading(MINUTE, 22)]),
          repository().add([reading(0, 23)]),
          repository().add([reading(2 * MINUTE, 24), reading(3 * MINUTE, 25)]),
          repository().add([reading(MINUTE, 26)]),
        ]);

        // Which of the two calls with the same new reading stores it is not fixed; exactly one does.
        expect([counts[0], counts[2], counts[3]]).to.deep.equal([0, 0, 2]);
        expect((counts[1] ?? 0) + (counts[4] ?? 0)).to.equal(1);
        const found = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 10);
        expect(found.map((r) => r.time.getTime())).to.deep.equal(
          [3, 2, 1, 0].map((minutes) => reading(minutes * MINUTE, 0).time.getTime()),
        );
        expect(found.at(-1)?.value).to.equal(20);
        expect((await repository().latestOfEveryTopic(GROUP)).map((r) => r.value)).to.deep.equal([25]);
      });

      it('when an empty batch is added, then nothing is stored and it answers 0', async () => {
        expect(await repository().add([])).to.equal(0);
        expect(await repository().latestOfEveryTopic(GROUP)).to.deep.equal([]);
      });

      it('when the caller changes its input after adding, then the stored reading is unchanged', async () => {
        const input = { ...reading(0, 20), time: at(0) };
        await repository().add([input]);

        input.time.setTime(at(5 * MINUTE).getTime());

        expect((await repository().latest(GROUP, TOPIC))?.time.getTime()).to.equal(at(0).getTime());
      });
    });

    describe('latest', () => {
      it('when the series is empty or unknown, then it answers undefined', async () => {
        await repository().add([reading(0, 20)]);

        expect(await repository().latest(GROUP, 'esp/air/humidity')).to.equal(undefined);
        expect(await repository().latest('no-such-group', TOPIC)).to.equal(undefined);
      });

      it('when readings arrive out of order, then it answers the one with the greatest time', async () => {
        await repository().add([
          reading(10 * MINUTE, 10),
          reading(30 * MINUTE, 30),
          reading(20 * MINUTE, 20),
        ]);
        expect((await repository().latest(GROUP, TOPIC))?.value).to.equal(30);

        await repository().add([reading(25 * MINUTE, 25)]);
        expect((await repository().latest(GROUP, TOPIC))?.value).to.equal(30);

        await repository().add([reading(40 * MINUTE, 40)]);
        expect((await repository().latest(GROUP, TOPIC))?.value).to.equal(40);
      });

      it('when other series hold newer readings, then they do not count', async () => {
        await repository().add([
          reading(0, 20),
          reading(MINUTE, 55, 'esp/air/humidity'),
          reading(2 * MINUTE, 19, TOPIC, 'greenhouse-b'),
        ]);

        expect((await repository().latest(GROUP, TOPIC))?.value).to.equal(20);
      });

      it('when the caller mutates the answer, then the stored reading is unchanged', async () => {
        await repository().add([reading(0, 20)]);
        const first = (await repository().latest(GROUP, TOPIC)) as Reading;

        first.time.setTime(0);
        (first as { value: number }).value = -1;

        const again = await repository().latest(GROUP, TOPIC);
        expect(again?.value).to.equal(20);
        expect(again?.time.getTime()).to.equal(at(0).getTime());
      });
    });

    describe('latestOfEveryTopic', () => {
      it('when the group has several topics, then it answers the newest reading of each, one per topic, ordered by topic', async () => {
        await repository().add([
          reading(0, 20, 'esp/air/temperature'),
          reading(2 * MINUTE, 22, 'esp/air/temperature'),
          reading(MINUTE, 21, 'esp/air/temperature'),
          reading(0, 500, 'esp/ground/light/lux'),
          reading(3 * MINUTE, 60, 'esp/air/humidity'),
          reading(MINUTE, 58, 'esp/air/humidity'),
          reading(9 * MINUTE, 1, 'esp/air/temperature', 'greenhouse-b'),
        ]);

        const found = await repository().latestOfEveryTopic(GROUP);

        expect(found.map((r) => [r.topic, r.value])).to.deep.equal([
          ['esp/air/humidity', 60],
          ['esp/air/temperature', 22],
          ['esp/ground/light/lux', 500],
        ]);
        expect(found.every((r) => r.group === GROUP && r.time instanceof Date)).to.equal(true);
      });

      it('when the group has no readings, then it answers an empty list', async () => {
        await repository().add([reading(0, 1, TOPIC, 'greenhouse-b')]);

        expect(await repository().latestOfEveryTopic(GROUP)).to.deep.equal([]);
      });
    });

    describe('the latest record kept beside the readings', () => {
      // Each case reads the latest values before it changes anything, so a store that keeps them as a record
      // has built it and must keep it true through the change, not rebuild it at the next read.
      const HUMIDITY = 'esp/air/humidity';

      it('when readings arrive in concurrent batches and out of order, then each topic answers its newest, the very reading stored', async () => {
        await repository().latestOfEveryTopic(GROUP);
        await Promise.all(
          [5, 1, 9, 3, 7, 2, 8, 4, 6].map((minutes) =>
            repository().add([
              reading(minutes * MINUTE, minutes),
              reading(minutes * MINUTE, minutes * 10, HUMIDITY),
            ]),
          ),
        );

        const latest = await repository().latestOfEveryTopic(GROUP);

        expect(latest.map((found) => [found.topic, found.value])).to.deep.equal([
          [HUMIDITY, 90],
          [TOPIC, 9],
        ]);
        const [stored] = await repository().newestFirst({ group: GROUP, topic: TOPIC }, 1);
        expect(await repository().latest(GROUP, TOPIC)).to.deep.equal(stored);
      });

      it('when older readings are copied in after newer ones (a migration), then latest still answers the newest', async () => {
        await repository().add([reading(10 * MINUTE, 30)]);
        expect(await repository().latest(GROUP, TOPIC)).to.include({ value: 30 });

        await repository().add([reading(0, 10), reading(MINUTE, 11), reading(20 * MINUTE, 40, HUMIDITY)]);

        expect(await repository().latest(GROUP, TOPIC)).to.include({ value: 30 });
        expect((await repository().latestOfEveryTopic(GROUP)).map((found) => found.value)).to.deep.equal([
          40, 30,
        ]);
      });

      it('when the newest reading of a topic is deleted, then latest answers the next one; when none is left, the topic is gone', async () => {
        await repository().add([reading(0, 1), reading(MINUTE, 2), reading(0, 50, HUMIDITY)]);
        expect(await repository().latestOfEveryTopic(GROUP)).to.have.length(2);

        await repository().deleteRange({ group: GROUP, topic: TOPIC, from: at(MINUTE), to: at(MINUTE) });
        expect(await repository().latest(GROUP, TOPIC)).to.include({ value: 1 });

        await repository().deleteRange({ group: GROUP, from: at(0), to: at(0) });
        expect(await repository().latest(GROUP, TOPIC)).to.equal(undefined);
        expect(await repository().latestOfEveryTopic(GROUP)).to.deep.equal([]);
      });

      it('when retention deletes in limited batches keeping summaries, then latest follows what is left', async () => {
        await repository().add([
          reading(0, 1),
          reading(MINUTE, 2),
          reading(2 * MINUTE, 3),
          reading(0, 50, HUMIDITY),
        ]);
        await repository().latestOfEveryTopic(GROUP);
        const batch = {
          group: GROUP,
          from: new Date(-8.64e15),
          to: at(MINUTE),
          limit: 1,
          keepSummaries: true,
        };

        while ((await repository().deleteRange(batch)) > 0) {
          // every batch removes the oldest reading left in the span
        }

        expect(
          (await repository().latestOfEveryTopic(GROUP)).map((found) => [found.topic, found.value]),
        ).to.deep.equal([[TOPIC, 3]]);
        await repository().deleteRange({ ...batch, to: at(2 * MINUTE) });
        expect(await repository().latestOfEveryTopic(GROUP)).to.deep.equal([]);
      });

      it('when a deleted topic gets readings again, then latest answers them', async () => {
        await repository().add([reading(MINUTE, 2)]);
        await repository().latest(GROUP, TOPIC);
        await repository().deleteRange({ group: GROUP, from: new Date(-8.64e15), to: new Date(8.64e15) });

        await repository().add([reading(0, 7)]);

        expect(await repository().latest(GROUP, TOPIC)).to.include({ value: 7 });
      });
    });

    readingQueryCases(repository);
    readingScanCases(repository);
    readingDeletionCases(repository);
  });
}
