import { expect, startTestServer, type TestServer } from './harness.js';

type Bucket = { time: string; min: number; max: number; avg: number; count: number };

describe('HTTP /api/data/All/* summarised into buckets', () => {
  let api: TestServer;
  let group: string;
  before(async () => {
    api = await startTestServer();
    group = api.unique('greenhouse');
    // testNow is 2025-06-15T12:30Z: every 20 s from 09:00 to 12:29:40, valued by position.
    const start = Date.parse('2025-06-15T09:00:00Z');
    const readings = Array.from({ length: 630 }, (_, i) => ({
      group,
      topic: 'esp/ground/light/lux',
      value: i,
      time: new Date(start + i * 20_000).toISOString(),
    }));
    await api.call('POST', '/api/data/readings', { json: readings });
  });
  after(async () => {
    await api.close();
  });

  it('when interval is given, then the answer is buckets {time, min, max, avg, count}, newest first', async () => {
    const reply = await api.get(`/api/data/All/Lux?groupId=${group}&interval=1h`);

    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal([
      { time: '2025-06-15T12:00:00.000Z', min: 540, max: 629, avg: 584.5, count: 90 },
      { time: '2025-06-15T11:00:00.000Z', min: 360, max: 539, avg: 449.5, count: 180 },
      { time: '2025-06-15T10:00:00.000Z', min: 180, max: 359, avg: 269.5, count: 180 },
      { time: '2025-06-15T09:00:00.000Z', min: 0, max: 179, avg: 89.5, count: 180 },
    ]);
  });

  it('when points is given with dates and value filters, then at most that many buckets of readings inside every bound', async () => {
    const reply = await api.get(
      `/api/data/all/lux?groupId=${group}&points=2&startDate=2025-06-15T10:00:00Z&endDate=2025-06-15T11:59:59Z&maxValue=400`,
    );

    expect(reply.status).to.equal(200);
    const buckets = reply.json() as Bucket[];
    expect(buckets).to.have.length.of.at.most(2);
    expect(buckets.reduce((sum, bucket) => sum + bucket.count, 0)).to.equal(221);
    expect(Math.max(...buckets.map((bucket) => bucket.max))).to.equal(400);
  });

  it('when count is given too, then only the newest buckets are answered', async () => {
    const reply = await api.get(`/api/data/All/Lux?groupId=${group}&interval=30m&count=2`);

    expect((reply.json() as Bucket[]).map((bucket) => bucket.time)).to.deep.equal([
      '2025-06-15T12:00:00.000Z',
      '2025-06-15T11:30:00.000Z',
    ]);
  });

  it('when neither is given, then the answer is readings as before', async () => {
    const reply = await api.get(`/api/data/All/Lux?groupId=${group}&count=1`);

    expect(reply.json()).to.deep.equal([
      {
        _id: (reply.json() as { _id: string }[])[0]?._id,
        group,
        topic: 'esp/ground/light/lux',
        value: 629,
        time: '2025-06-15T12:29:40.000Z',
      },
    ]);
  });

  it('when interval or points is malformed, both are given, or the interval is too fine for the window, then 400 {message}', async () => {
    const cases: [string, string][] = [
      ['interval=5x', 'interval must be a duration'],
      ['interval=0s', 'interval must be a duration'],
      ['interval=31d', 'interval must be a duration'],
      ['points=0', 'points must be a whole number from 1 to 5000'],
      ['points=many', 'points must be a whole number'],
      ['interval=1h&points=10', 'interval cannot be combined with points'],
      ['interval=1s', 'more than 5000'],
      ['interval=1h&interval=2h', 'interval must be given only once'],
    ];
    for (const [query, message] of cases) {
      const reply = await api.get(`/api/data/All/Lux?groupId=${group}&${query}`);
      expect(reply.status, query).to.equal(400);
      expect((reply.json() as { message: string }).message, query).to.include(message);
    }
  });

  it('when the OpenAPI document is read, then it describes interval, points and the bucket shape', async () => {
    const document = (await api.get('/api/openapi.json')).json() as {
      paths: Record<string, { get: { parameters: { name: string }[] } }>;
      components: { schemas: Record<string, unknown> };
    };

    const parameters = document.paths['/api/data/All/Lux']?.get.parameters.map((p) => p.name);
    expect(parameters).to.include.members(['interval', 'points']);
    expect(document.components.schemas).to.have.property('ReadingBucket');
  });
});
