import { type NewReading, type ReadingBucket, type ReadingRange, type ReadingRepository } from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const GROUP = 'greenhouse-a';
const TOPIC = 'esp/air/temperature';
const SECOND = 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function reading(offsetMs: number, value: number, topic = TOPIC, group = GROUP): NewReading {
  return { group, topic, value, time: at(offsetMs) };
}

/** Buckets as plain numbers, in answer order. */
function plain(buckets: readonly ReadingBucket[]): [number, number, number, number, number][] {
  return buckets.map((bucket) => [bucket.time.getTime(), bucket.min, bucket.max, bucket.avg, bucket.count]);
}

/** The reference: every reading of the range, bucketed one by one. */
function summarise(readings: readonly NewReading[], range: ReadingRange, bucketMs: number): ReadingBucket[] {
  const sums = new Map<number, number[]>();
  for (const { group, topic, value, time } of readings) {
    if (group !== range.group || topic !== range.topic) continue;
    if (range.startDate !== undefined && time < range.startDate) continue;
    if (range.endDate !== undefined && time > range.endDate) continue;
    if (range.minValue !== undefined && value < range.minValue) continue;
    if (range.maxValue !== undefined && value > range.maxValue) continue;
    const start = Math.floor(time.getTime() / bucketMs) * bucketMs;
    sums.set(start, [...(sums.get(start) ?? []), value]);
  }
  return [...sums.entries()]
    .sort(([a], [b]) => b - a)
    .map(([start, values]) => ({
      time: new Date(start),
      min: values.reduce((least, value) => Math.min(least, value)),
      max: values.reduce((most, value) => Math.max(most, value)),
      avg: values.reduce((sum, value) => sum + value, 0) / values.length,
      count: values.length,
    }));
}

export function readingAggregateContract(name: string, createStore: StoreFactory<'readings'>): void {
  describe(`${name}: ReadingRepository.aggregate contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): ReadingRepository => store().readings;
    const range = { group: GROUP, topic: TOPIC };

    it('when readings fall into buckets, then each bucket answers its start, min, max, avg and count, newest first, empty ones left out', async () => {
      await repository().add([
        reading(0, 10),
        reading(MINUTE, 20),
        reading(2 * MINUTE, 30),
        reading(11 * MINUTE, 5),
        reading(14 * MINUTE, 7),
      ]);

      const buckets = await repository().aggregate(range, 5 * MINUTE);

      expect(plain(buckets)).to.deep.equal([
        [at(10 * MINUTE).getTime(), 5, 7, 6, 2],
        [at(0).getTime(), 10, 30, 20, 3],
      ]);
      expect(buckets[0]?.time).to.be.an.instanceOf(Date);
    });

    it('when the range starts inside a bucket, then the bucket still starts at a multiple of its size and counts only readings in the range', async () => {
      await repository().add([
        reading(0, 10),
        reading(MINUTE, 20),
        reading(2 * MINUTE, 30),
        reading(3 * MINUTE, 40),
      ]);

      const buckets = await repository().aggregate(
        { ...range, startDate: at(MINUTE + 1), endDate: at(3 * MINUTE) },
        5 * MINUTE,
      );

      expect(plain(buckets)).to.deep.equal([[at(0).getTime(), 30, 40, 35, 2]]);
    });

    it('when a bucket is one day, then it starts at midnight UTC', async () => {
      await repository().add([reading(0, 1), reading(13 * HOUR, 3)]);

      const buckets = await repository().aggregate(range, DAY);

      // at(0) is noon UTC, so the two readings fall on two days.
      const midnight = Date.UTC(2024, 4, 1);
      expect(plain(buckets)).to.deep.equal([
        [midnight + DAY, 3, 3, 3, 1],
        [midnight, 1, 1, 1, 1],
      ]);
    });

    it('when value filters are given, then they apply to the readings before they are summarised', async () => {
      await repository().add([
        reading(0, 10),
        reading(MINUTE, 20),
        reading(2 * MINUTE, 30),
        reading(3 * MINUTE, 40),
      ]);

      const buckets = await repository().aggregate({ ...range, minValue: 15, maxValue: 30 }, HOUR);

      expect(plain(buckets)).to.deep.equal([[at(0).getTime(), 20, 30, 25, 2]]);
    });

    it('when other topics and groups have readings, then they are not counted', async () => {
      await repository().add([
        reading(0, 10),
        reading(0, 99, 'esp/air/humidity'),
        reading(MINUTE, 98, TOPIC, 'greenhouse-b'),
      ]);

      expect(plain(await repository().aggregate(range, HOUR))).to.deep.equal([
        [at(0).getTime(), 10, 10, 10, 1],
      ]);
      expect(await repository().aggregate({ group: 'no-such-group', topic: TOPIC }, HOUR)).to.deep.equal([]);
    });

    it('when a delivery is retried or readings arrive out of order over several batches, then each reading counts once', async () => {
      await repository().add([reading(2 * MINUTE, 30), reading(0, 10)]);
      await repository().add([reading(0, 99), reading(MINUTE, 20), reading(2 * MINUTE, 30)]);
      await Promise.all([
        repository().add([reading(3 * MINUTE, 40)]),
        repository().add([reading(3 * MINUTE, 40)]),
      ]);

      expect(plain(await repository().aggregate(range, HOUR))).to.deep.equal([
        [at(0).getTime(), 10, 40, 25, 4],
      ]);
    });

    it('when distinct readings of one minute are added by concurrent calls, then every one is counted', async () => {
      await Promise.all(Array.from({ length: 10 }, (_, i) => repository().add([reading(i * SECOND, i)])));

      expect(plain(await repository().aggregate(range, HOUR))).to.deep.equal([
        [at(0).getTime(), 0, 9, 4.5, 10],
      ]);
    });

    it('when the range holds no readings, then it answers an empty list', async () => {
      await repository().add([reading(0, 10)]);

      expect(await repository().aggregate({ ...range, startDate: at(MINUTE) }, MINUTE)).to.deep.equal([]);
      expect(await repository().aggregate({ ...range, endDate: at(-1) }, HOUR)).to.deep.equal([]);
    });

    it('when readings span days and the range edges fall between seconds, minutes and hours, then every bucket size answers as if each reading were counted one by one', async () => {
      // Every 7 minutes 30 seconds for two and a half days, values with halves only: exact in every sum.
      const readings = Array.from({ length: 480 }, (_, i) =>
        reading(i * 450 * SECOND - 5 * HOUR, (i % 37) / 2),
      );
      await repository().add(readings);
      const ranges: ReadingRange[] = [
        range,
        {
          ...range,
          startDate: at(-3 * HOUR + 17 * MINUTE + 30 * SECOND + 1),
          endDate: at(40 * HOUR + 7 * SECOND),
        },
        { ...range, startDate: at(2 * HOUR), endDate: at(26 * HOUR - 1) },
        { ...range, endDate: at(20 * HOUR + 37 * MINUTE + 30 * SECOND) },
        { ...range, startDate: at(HOUR + 22 * MINUTE + 30 * SECOND) },
      ];

      for (const query of ranges) {
        for (const bucketMs of [15 * SECOND, 5 * MINUTE, 90 * MINUTE, 2 * HOUR, DAY]) {
          const found = await repository().aggregate(query, bucketMs);
          expect(plain(found), `bucket ${bucketMs} ms, range ${JSON.stringify(query)}`).to.deep.equal(
            plain(summarise(readings, query, bucketMs)),
          );
        }
      }
    });

    it('when readings are deleted with edges inside minutes and hours, then every bucket size answers as if they had never been stored', async () => {
      const readings = Array.from({ length: 480 }, (_, i) =>
        reading(i * 450 * SECOND - 5 * HOUR, (i % 37) / 2),
      );
      const other = reading(3 * HOUR, 99, 'esp/air/humidity');
      await repository().add([...readings, other]);
      const from = at(-2 * HOUR + 7 * MINUTE + 30 * SECOND);
      const to = at(20 * HOUR + 52 * MINUTE + 30 * SECOND);

      const deleted = await repository().deleteRange({ group: GROUP, topic: TOPIC, from, to });

      const kept = readings.filter(({ time }) => time < from || time > to);
      expect(deleted).to.equal(readings.length - kept.length);
      for (const query of [range, { ...range, startDate: at(-3 * HOUR), endDate: at(30 * HOUR) }]) {
        for (const bucketMs of [15 * SECOND, 5 * MINUTE, HOUR, DAY]) {
          const found = await repository().aggregate(query, bucketMs);
          expect(plain(found), `bucket ${bucketMs} ms`).to.deep.equal(
            plain(summarise(kept, query, bucketMs)),
          );
        }
      }
      const humidity = { group: GROUP, topic: 'esp/air/humidity' };
      expect(plain(await repository().aggregate(humidity, HOUR))).to.deep.equal(
        plain(summarise([other], humidity, HOUR)),
      );
    });

    it('when every reading of a series is deleted, then its aggregates are empty, and new readings count afresh', async () => {
      await repository().add([reading(0, 1), reading(MINUTE, 2), reading(HOUR, 3)]);

      await repository().deleteRange({ group: GROUP, from: at(-DAY), to: at(DAY) });

      expect(await repository().aggregate(range, HOUR)).to.deep.equal([]);
      await repository().add([reading(MINUTE, 7)]);
      expect(plain(await repository().aggregate(range, HOUR))).to.deep.equal([[at(0).getTime(), 7, 7, 7, 1]]);
    });
  });
}
