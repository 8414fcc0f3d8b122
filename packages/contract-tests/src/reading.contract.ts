import { type NewReading, type Reading, type ReadingRepository } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const GROUP = 'greenhouse-a';
const TOPIC = 'esp/air/temperature';

function reading(offsetMs: number, value: number, topic = TOPIC, group = GROUP): NewReading {
  return { group, topic, value, time: at(offsetMs) };
}

/** Times and values only, in answer order: what most cases compare. */
function samples(readings: readonly Reading[]): [number, number][] {
  return readings.map((found) => [found.time.getTime(), found.value]);
}

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

        expect(await repository().newestFirst({ ...range, startDate: at(10 * MINUTE) }, 100)).to.deep.equal(
          [],
        );
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
  });
}
