import {
  DEFAULT_READINGS_LIMIT,
  GetLatestReading,
  GetTodayHourlyReadings,
  type HourlyReading,
  InvalidInputError,
  MAX_READINGS_LIMIT,
  MAX_READINGS_PER_BATCH,
  QueryReadings,
  RecordReadings,
  sensorTopics,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const GROUP = 'greenhouse-a';
const TEMPERATURE = sensorTopics.temperature;

async function record(
  app: TestApp,
  readings: { time: string; value: number | string; topic?: string }[],
): Promise<void> {
  const result = await app
    .get(RecordReadings)
    .execute(
      readings.map((r) => ({ group: GROUP, topic: r.topic ?? TEMPERATURE, value: r.value, time: r.time })),
    );
  expect(result.rejected).to.deep.equal([]);
}

/** Hour buckets as `[hour, ISO time of its reading]` pairs. */
function buckets(hourly: readonly HourlyReading[]): [number, string][] {
  return hourly.map((bucket) => [bucket._id, bucket.data.time.toISOString()]);
}

describe('readings use cases', () => {
  describe('RecordReadings', () => {
    it('when a reading is stamped beyond the configured clock skew, then it is rejected with a reason and not stored', async () => {
      const app = createTestApp({
        now: '2024-06-15T08:30:00.000Z',
        settings: { limits: { maxClockSkewMs: 1000 } },
      });
      const reading = (time: string) => ({ group: GROUP, topic: TEMPERATURE, value: 20, time });

      const result = await app
        .get(RecordReadings)
        .execute([reading('2024-06-15T08:30:01.000Z'), reading('2024-06-15T08:30:01.001Z')]);

      expect(result.accepted).to.equal(1);
      expect(result.rejected).to.deep.equal([
        { index: 1, reason: "time is more than 1 s ahead of the server's clock" },
      ]);
      const latest = await app.get(GetLatestReading).execute({ group: GROUP, topic: TEMPERATURE });
      expect(latest.map((r) => r.time.toISOString())).to.deep.equal(['2024-06-15T08:30:01.000Z']);
    });

    it('when a batch mixes good and bad items, then the good ones are stored and the bad ones rejected by index', async () => {
      const app = createTestApp();
      const good = { group: GROUP, topic: TEMPERATURE, value: 21.5, time: '2024-06-15T08:00:00.000Z' };

      const result = await app
        .get(RecordReadings)
        .execute([
          good,
          { group: GROUP, value: 1 },
          'not an object',
          { group: GROUP, topic: TEMPERATURE, value: 'warm' },
          { group: GROUP, topic: TEMPERATURE, value: '23.45' },
          { ...good },
          { group: GROUP, topic: 'esp/#', value: 1 },
          { group: GROUP, topic: TEMPERATURE, value: 1, time: 'not a time' },
        ]);

      expect(result.accepted).to.equal(3);
      expect(result.stored).to.equal(2);
      expect(result.rejected.map((r) => r.index)).to.deep.equal([1, 2, 3, 6, 7]);
      expect(result.rejected[0]?.reason).to.contain('topic');
      expect(result.rejected[2]?.reason).to.contain('value');
      expect(result.rejected[4]?.reason).to.contain('time');
      const stored = await app.get(QueryReadings).execute({ group: GROUP, topic: TEMPERATURE });
      expect(stored.map((r) => [r.value, r.time.toISOString()])).to.deep.equal([
        [23.45, app.clock.now().toISOString()],
        [21.5, '2024-06-15T08:00:00.000Z'],
      ]);
    });

    it('when a batch is delivered again, then it is accepted and nothing is stored twice', async () => {
      const app = createTestApp();
      const batch = [{ group: GROUP, topic: TEMPERATURE, value: 20, time: '2024-06-15T08:00:00.000Z' }];
      await app.get(RecordReadings).execute(batch);

      expect(await app.get(RecordReadings).execute(batch)).to.deep.equal({
        accepted: 1,
        stored: 0,
        rejected: [],
      });
    });

    it('when a batch is larger than the limit, then it is invalid input and nothing is stored', async () => {
      const app = createTestApp();
      const batch = Array.from({ length: MAX_READINGS_PER_BATCH + 1 }, () => ({
        group: GROUP,
        topic: TEMPERATURE,
        value: 1,
      }));

      await expect(app.get(RecordReadings).execute(batch)).to.be.rejectedWith(InvalidInputError);
      expect(await app.get(GetLatestReading).execute({ group: GROUP, topic: TEMPERATURE })).to.deep.equal([]);
    });
  });

  describe('QueryReadings', () => {
    let app: TestApp;

    beforeEach(async () => {
      app = createTestApp();
      const start = Date.UTC(2024, 5, 1);
      const batch = Array.from({ length: 1200 }, (_, i) => ({
        group: GROUP,
        topic: TEMPERATURE,
        value: i,
        time: new Date(start + i * 60_000).toISOString(),
      }));
      await app.get(RecordReadings).execute(batch);
    });

    it('when no count is given, then at most 1000 readings are answered, newest first', async () => {
      const found = await app.get(QueryReadings).execute({ group: GROUP, topic: TEMPERATURE });

      expect(DEFAULT_READINGS_LIMIT).to.equal(1000);
      expect(found).to.have.lengthOf(1000);
      expect(found[0]?.value).to.equal(1199);
      expect(found[999]?.value).to.equal(200);
    });

    it('when a count is given, then that many are answered, up to the maximum', async () => {
      const query = app.get(QueryReadings);
      expect(await query.execute({ group: GROUP, topic: TEMPERATURE, count: '100' })).to.have.lengthOf(100);
      expect(await query.execute({ group: GROUP, topic: TEMPERATURE, count: 4000 })).to.have.lengthOf(1200);
      expect(
        await query.execute({ group: GROUP, topic: TEMPERATURE, count: MAX_READINGS_LIMIT }),
      ).to.have.lengthOf(1200);
    });

    it('when count is above the maximum, below 1 or not whole, then it is invalid input', async () => {
      for (const count of [MAX_READINGS_LIMIT + 1, 0, -5, 1.5, 'many']) {
        await expect(
          app.get(QueryReadings).execute({ group: GROUP, topic: TEMPERATURE, count }),
          String(count),
        ).to.be.rejectedWith(InvalidInputError, 'count');
      }
    });

    it('when value filters arrive as query text, then they compare numerically and inclusively', async () => {
      const found = await app
        .get(QueryReadings)
        .execute({ group: GROUP, topic: TEMPERATURE, minValue: '9.5', maxValue: '100' });

      expect(found.map((r) => r.value)).to.deep.equal(Array.from({ length: 91 }, (_, i) => 100 - i));
    });

    it('when date filters are given, then both bounds are inclusive', async () => {
      const found = await app.get(QueryReadings).execute({
        group: GROUP,
        topic: TEMPERATURE,
        startDate: '2024-06-01T00:10:00.000Z',
        endDate: '2024-06-01T00:12:00Z',
      });

      expect(found.map((r) => r.value)).to.deep.equal([12, 11, 10]);
    });

    it('when filters contradict each other or are not parseable, then it is invalid input', async () => {
      for (const filters of [
        { startDate: '2024-06-02T00:00:00Z', endDate: '2024-06-01T00:00:00Z' },
        { minValue: 10, maxValue: 9 },
        { startDate: 'last week' },
        { minValue: 'ten' },
      ]) {
        await expect(
          app.get(QueryReadings).execute({ group: GROUP, topic: TEMPERATURE, ...filters }),
          JSON.stringify(filters),
        ).to.be.rejectedWith(InvalidInputError);
      }
    });
  });

  describe('GetTodayHourlyReadings', () => {
    it('when readings span the day, then the earliest of each local hour is answered, hours ascending', async () => {
      // 10:30 in Berlin (CEST, UTC+2) on 15 June.
      const app = createTestApp({ now: '2024-06-15T08:30:00.000Z', settings: { timeZone: 'Europe/Berlin' } });
      await record(app, [
        { time: '2024-06-14T21:59:00.000Z', value: 1 }, // 23:59 yesterday
        { time: '2024-06-14T22:40:00.000Z', value: 2 }, // 00:40
        { time: '2024-06-14T22:10:00.000Z', value: 3 }, // 00:10, recorded later but earlier in time
        { time: '2024-06-15T01:05:00.000Z', value: 4 }, // 03:05
        { time: '2024-06-15T01:59:59.999Z', value: 5 }, // 03:59:59.999
        { time: '2024-06-15T08:15:00.000Z', value: 6 }, // 10:15
        { time: '2024-06-15T05:00:00.000Z', value: 7, topic: sensorTopics.humidity }, // 07:00, other topic
      ]);

      const hourly = await app.get(GetTodayHourlyReadings).execute({ group: GROUP });

      expect(buckets(hourly)).to.deep.equal([
        [0, '2024-06-14T22:10:00.000Z'],
        [3, '2024-06-15T01:05:00.000Z'],
        [10, '2024-06-15T08:15:00.000Z'],
      ]);
      expect(hourly[0]?.data).to.include({ value: 3, topic: TEMPERATURE, group: GROUP });
    });

    it('when value filters are given, then they filter the readings before the earliest is chosen', async () => {
      const app = createTestApp({ now: '2024-06-15T08:30:00.000Z', settings: { timeZone: 'Europe/Berlin' } });
      await record(app, [
        { time: '2024-06-15T01:05:00.000Z', value: 35 },
        { time: '2024-06-15T01:20:00.000Z', value: 9.5 },
        { time: '2024-06-15T01:40:00.000Z', value: 10 },
      ]);

      const hourly = await app
        .get(GetTodayHourlyReadings)
        .execute({ group: GROUP, minValue: '9.5', maxValue: 30 });

      expect(buckets(hourly)).to.deep.equal([[3, '2024-06-15T01:20:00.000Z']]);
    });

    it('when the zone is ahead of UTC, then "today" starts at local midnight, not at UTC midnight', async () => {
      const readings = [
        { time: '2024-06-15T21:30:00.000Z', value: 1 }, // 23:30 on the 15th in Berlin
        { time: '2024-06-15T22:30:00.000Z', value: 2 }, // 00:30 on the 16th in Berlin
      ];
      const berlin = createTestApp({
        now: '2024-06-15T23:30:00.000Z',
        settings: { timeZone: 'Europe/Berlin' },
      });
      const utc = createTestApp({ now: '2024-06-15T23:30:00.000Z', settings: { timeZone: 'UTC' } });
      await record(berlin, readings);
      await record(utc, readings);

      expect(buckets(await berlin.get(GetTodayHourlyReadings).execute({ group: GROUP }))).to.deep.equal([
        [0, '2024-06-15T22:30:00.000Z'],
      ]);
      expect(buckets(await utc.get(GetTodayHourlyReadings).execute({ group: GROUP }))).to.deep.equal([
        [21, '2024-06-15T21:30:00.000Z'],
        [22, '2024-06-15T22:30:00.000Z'],
      ]);
    });

    it('when Berlin falls back (27 October 2024), then the repeated 02:00 hour is one bucket holding its earliest reading', async () => {
      const app = createTestApp({ now: '2024-10-27T22:30:00.000Z', settings: { timeZone: 'Europe/Berlin' } });
      await record(app, [
        { time: '2024-10-26T21:59:00.000Z', value: 1 }, // 23:59 CEST the day before
        { time: '2024-10-26T22:05:00.000Z', value: 2 }, // 00:05 CEST
        { time: '2024-10-27T01:10:00.000Z', value: 3 }, // 02:10 CET, the second 02:00 hour
        { time: '2024-10-27T00:30:00.000Z', value: 4 }, // 02:30 CEST, the first 02:00 hour
        { time: '2024-10-27T02:00:00.000Z', value: 5 }, // 03:00 CET
        { time: '2024-10-27T22:15:00.000Z', value: 6 }, // 23:15 CET
      ]);

      const hourly = await app.get(GetTodayHourlyReadings).execute({ group: GROUP });

      expect(buckets(hourly)).to.deep.equal([
        [0, '2024-10-26T22:05:00.000Z'],
        [2, '2024-10-27T00:30:00.000Z'],
        [3, '2024-10-27T02:00:00.000Z'],
        [23, '2024-10-27T22:15:00.000Z'],
      ]);
    });

    it('when Berlin springs forward (31 March 2024), then there is no 02:00 bucket and no reading is lost', async () => {
      const app = createTestApp({ now: '2024-03-31T12:00:00.000Z', settings: { timeZone: 'Europe/Berlin' } });
      await record(app, [
        { time: '2024-03-30T22:59:00.000Z', value: 1 }, // 23:59 CET the day before
        { time: '2024-03-30T23:00:00.000Z', value: 2 }, // 00:00 CET
        { time: '2024-03-31T00:59:59.999Z', value: 3 }, // 01:59:59.999 CET
        { time: '2024-03-31T01:00:00.000Z', value: 4 }, // 03:00 CEST, right after the gap
        { time: '2024-03-31T12:00:00.000Z', value: 5 }, // 14:00 CEST, exactly now
      ]);

      const hourly = await app.get(GetTodayHourlyReadings).execute({ group: GROUP });

      expect(buckets(hourly)).to.deep.equal([
        [0, '2024-03-30T23:00:00.000Z'],
        [1, '2024-03-31T00:59:59.999Z'],
        [3, '2024-03-31T01:00:00.000Z'],
        [14, '2024-03-31T12:00:00.000Z'],
      ]);
    });
  });
});
