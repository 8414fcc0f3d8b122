import {
  AggregateReadings,
  InvalidInputError,
  MAX_BUCKETS,
  parseInterval,
  type ReadingBucket,
  RecordReadings,
  sensorTopics,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const GROUP = 'greenhouse-a';
const TEMPERATURE = sensorTopics.temperature;
const NOW = '2024-06-15T08:30:00.000Z';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function record(app: TestApp, readings: { time: number; value: number }[]): Promise<void> {
  const result = await app.get(RecordReadings).execute(
    readings.map(({ time, value }) => ({
      group: GROUP,
      topic: TEMPERATURE,
      value,
      time: new Date(time).toISOString(),
    })),
  );
  expect(result.rejected).to.deep.equal([]);
}

/** `[ISO start, min, max, avg, count]` per bucket, in answer order. */
function plain(buckets: readonly ReadingBucket[]): [string, number, number, number, number][] {
  return buckets.map((b) => [b.time.toISOString(), b.min, b.max, b.avg, b.count]);
}

describe('AggregateReadings', () => {
  let app: TestApp;
  const now = Date.parse(NOW);
  const aggregate = (query: Record<string, unknown>): Promise<ReadingBucket[]> =>
    app.get(AggregateReadings).execute({ group: GROUP, topic: TEMPERATURE, ...query });

  beforeEach(() => {
    // Readings after now prove the default window ends with the bucket holding now: allow them in.
    app = createTestApp({ now: NOW, settings: { limits: { maxClockSkewMs: 3 * 86_400_000 } } });
  });

  it('when an interval is given, then readings are summarised per bucket of that size, newest first', async () => {
    // Every 20 s from 05:00 until just before now (08:30), valued by their position.
    const start = Date.parse('2024-06-15T05:00:00Z');
    await record(
      app,
      Array.from({ length: 630 }, (_, i) => ({ time: start + i * 20_000, value: i })),
    );

    expect(plain(await aggregate({ interval: '1h' }))).to.deep.equal([
      ['2024-06-15T08:00:00.000Z', 540, 629, 584.5, 90],
      ['2024-06-15T07:00:00.000Z', 360, 539, 449.5, 180],
      ['2024-06-15T06:00:00.000Z', 180, 359, 269.5, 180],
      ['2024-06-15T05:00:00.000Z', 0, 179, 89.5, 180],
    ]);
    expect(plain(await aggregate({ interval: ' 90 m ' }))).to.have.lengthOf(3);
  });

  it('when no startDate is given, then the window is the 30 days up to the end of the bucket holding now', async () => {
    await record(app, [
      { time: now - 31 * DAY, value: 1 },
      { time: now - 29 * DAY, value: 2 },
      { time: now + HOUR, value: 3 },
      { time: now + 2 * DAY, value: 4 },
    ]);

    const buckets = await aggregate({ interval: '1d' });

    expect(buckets.map((b) => b.max)).to.deep.equal([3, 2]);
  });

  it('when only an endDate is given, then the window is the 30 days before it', async () => {
    const end = now - 10 * DAY;
    await record(app, [
      { time: end - 31 * DAY, value: 1 },
      { time: end - 29 * DAY, value: 2 },
      { time: end, value: 3 },
      { time: end + 1, value: 4 },
    ]);

    const buckets = await aggregate({ interval: '1h', endDate: new Date(end).toISOString() });

    expect(buckets.map((b) => b.max)).to.deep.equal([3, 2]);
  });

  it('when points is given, then the bucket is the smallest round size giving at most that many buckets', async () => {
    const day = Date.parse('2024-06-14T00:00:00Z');
    await record(
      app,
      [0, 1, 2, 3].map((hour) => ({ time: day + hour * HOUR, value: hour })),
    );

    // 30 days into 500 buckets: 86.4 minutes is no round size, two hours is.
    expect(plain(await aggregate({ points: '500' }))).to.deep.equal([
      ['2024-06-14T02:00:00.000Z', 2, 3, 2.5, 2],
      ['2024-06-14T00:00:00.000Z', 0, 1, 0.5, 2],
    ]);
    expect(await aggregate({ points: 1000 })).to.have.lengthOf(4);
    const between = { startDate: '2024-06-14T00:00:00Z', endDate: '2024-06-14T04:00:00Z' };
    // Four hours into at most 4 buckets: hourly would need 5 (the end is inclusive), so two hours.
    expect(plain(await aggregate({ ...between, points: 4 })).map(([time]) => time)).to.deep.equal([
      '2024-06-14T02:00:00.000Z',
      '2024-06-14T00:00:00.000Z',
    ]);
    expect(await aggregate({ ...between, points: 5 })).to.have.lengthOf(4);
  });

  it('when points is tiny for a long range, then buckets grow in whole multiples of 30 days', async () => {
    await record(app, [
      { time: Date.parse('2023-01-01T00:00:00Z'), value: 1 },
      { time: Date.parse('2024-06-01T00:00:00Z'), value: 2 },
    ]);

    const buckets = await aggregate({ startDate: '2022-06-15', endDate: NOW, points: 2 });

    expect(buckets.length).to.be.at.most(2);
    expect(buckets.reduce((sum, bucket) => sum + bucket.count, 0)).to.equal(2);
    const [newer, older] = buckets;
    const size = newer === undefined || older === undefined ? 0 : newer.time.getTime() - older.time.getTime();
    expect(size % (30 * DAY)).to.equal(0);
  });

  it('when value filters and count are given, then filters apply first and count keeps the newest buckets', async () => {
    const start = now - 3 * HOUR;
    await record(
      app,
      Array.from({ length: 180 }, (_, i) => ({ time: start + i * MINUTE, value: i % 10 })),
    );

    const buckets = await aggregate({ interval: '1h', minValue: '2', maxValue: 4, count: '2' });

    // From 05:30 to 08:29: the last hour holds 30 readings, 9 of them between 2 and 4.
    expect(plain(buckets)).to.deep.equal([
      ['2024-06-15T08:00:00.000Z', 2, 4, 3, 9],
      ['2024-06-15T07:00:00.000Z', 2, 4, 3, 18],
    ]);
  });

  it('when the interval would give more buckets than allowed, then it is invalid input naming the limit', async () => {
    await expect(aggregate({ interval: '1s' })).to.be.rejectedWith(InvalidInputError, String(MAX_BUCKETS));
    expect(await aggregate({ interval: '1s', startDate: new Date(now - HOUR).toISOString() })).to.deep.equal(
      [],
    );
  });

  it('when interval and points are both given, neither is, or either is malformed, then it is invalid input', async () => {
    for (const query of [
      { interval: '1h', points: 10 },
      {},
      { interval: '0s' },
      { interval: '31d' },
      { interval: '5x' },
      { interval: '1.5h' },
      { interval: 3600 },
      { interval: '' },
      { points: 0 },
      { points: MAX_BUCKETS + 1 },
      { points: 'ten' },
      { interval: '1h', count: 0 },
    ]) {
      await expect(aggregate(query), JSON.stringify(query)).to.be.rejectedWith(InvalidInputError);
    }
  });

  it('when intervals are parsed, then seconds, minutes, hours and days up to 30 days are understood', () => {
    expect(parseInterval('20s')).to.equal(20_000);
    expect(parseInterval('5m')).to.equal(5 * MINUTE);
    expect(parseInterval('1h')).to.equal(HOUR);
    expect(parseInterval('30d')).to.equal(30 * DAY);
    expect(() => parseInterval('720h1')).to.throw(InvalidInputError, 'interval');
  });
});
