import { CreateAccessKey, MAX_READINGS_PER_BATCH } from '@hortus/core';
import { expect, startTestServer, type TestServer, testNow } from './harness.js';

type Reading = { _id: string; group: string; topic: string; value: number; time: string };

const temperature = 'esp/air/temperature';
const humidity = 'esp/air/humidity';

describe('HTTP POST /api/data/readings', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  const post = (json: unknown) => api.call('POST', '/api/data/readings', { json });
  const latestOf = async (group: string): Promise<Reading[]> =>
    (await api.get(`/api/data/latestdata/All?groupId=${group}`)).json() as Reading[];

  it('when one reading is sent, then 202 {accepted: 1, stored: 1, rejected: []} and it is the latest', async () => {
    const group = api.unique('box');
    const reply = await post({ group, topic: temperature, value: 21.5, time: '2025-06-15T12:00:00Z' });
    expect(reply.status).to.equal(202);
    expect(reply.json()).to.deep.equal({ accepted: 1, stored: 1, rejected: [] });
    const latest = await latestOf(group);
    expect(latest).to.have.length(1);
    expect(latest[0]).to.include({
      group,
      topic: temperature,
      value: 21.5,
      time: '2025-06-15T12:00:00.000Z',
    });
  });

  it('when a batch is sent, then every reading is stored and /latestdata/All shows the newest per topic', async () => {
    const group = api.unique('box');
    const reply = await post([
      { group, topic: temperature, value: 19, time: '2025-06-15T11:00:00Z' },
      { group, topic: temperature, value: 20, time: '2025-06-15T11:10:00Z' },
      { group, topic: humidity, value: 55, time: '2025-06-15T11:10:00Z' },
    ]);
    expect(reply.status).to.equal(202);
    expect(reply.json()).to.deep.equal({ accepted: 3, stored: 3, rejected: [] });
    const latest = await latestOf(group);
    expect(latest.map((reading) => [reading.topic, reading.value])).to.have.deep.members([
      [temperature, 20],
      [humidity, 55],
    ]);
  });

  it('when the compact form is sent, alone or in an array, then one reading per topic with the common time', async () => {
    const group = api.unique('box');
    const one = await post({
      group,
      time: '2025-06-15T10:00:00Z',
      values: { [temperature]: 18.25, [humidity]: 61 },
    });
    expect(one.status).to.equal(202);
    expect(one.json()).to.deep.equal({ accepted: 2, stored: 2, rejected: [] });
    const several = await post([
      { group, time: '2025-06-15T10:05:00Z', values: { [temperature]: 18.5 } },
      { group, time: '2025-06-15T10:10:00Z', values: { [temperature]: 19, 'esp/ground/moisture/1': 40 } },
    ]);
    expect(several.json()).to.deep.equal({ accepted: 3, stored: 3, rejected: [] });
    const series = (await api.get(`/api/data/All/temperature?groupId=${group}`)).json() as Reading[];
    expect(series.map((reading) => [reading.time, reading.value])).to.deep.equal([
      ['2025-06-15T10:10:00.000Z', 19],
      ['2025-06-15T10:05:00.000Z', 18.5],
      ['2025-06-15T10:00:00.000Z', 18.25],
    ]);
  });

  it('when valid and invalid items are mixed, then the valid ones are stored and each bad one is named by its index', async () => {
    const group = api.unique('box');
    const reply = await post([
      { group, topic: temperature, value: 20, time: '2025-06-15T09:00:00Z' },
      { group, topic: temperature, value: 'warm', time: '2025-06-15T09:01:00Z' },
      'not a reading',
      { group, time: '2025-06-15T09:02:00Z', values: { [humidity]: 50, 'esp/ground/moisture/1': 'wet' } },
      { topic: temperature, value: 21 },
      { group, topic: 'esp/#', value: 1 },
      { group, topic: temperature, value: 22, time: 'yesterday-ish' },
    ]);
    expect(reply.status).to.equal(202);
    expect(reply.json()).to.deep.equal({
      accepted: 2,
      stored: 2,
      rejected: [
        { index: 1, reason: 'value must be a finite number' },
        { index: 2, reason: 'a reading must be an object' },
        { index: 3, reason: 'value must be a finite number', topic: 'esp/ground/moisture/1' },
        { index: 4, reason: 'group must be a string' },
        { index: 5, reason: 'topic must not contain MQTT wildcards or control characters' },
        {
          index: 6,
          reason: 'time must be an RFC 3339 date-time with Z or an offset, such as 2025-06-15T10:00:00Z',
        },
      ],
    });
    const latest = await latestOf(group);
    expect(latest.map((reading) => [reading.topic, reading.value])).to.have.deep.members([
      [temperature, 20],
      [humidity, 50],
    ]);
  });

  it('when a delivery is retried with the same group, topic and time, then it is accepted but not stored twice', async () => {
    const group = api.unique('box');
    const batch = [
      { group, topic: temperature, value: 20, time: '2025-06-15T08:00:00Z' },
      { group, topic: temperature, value: 21, time: '2025-06-15T08:01:00Z' },
    ];
    expect((await post(batch)).json()).to.deep.equal({ accepted: 2, stored: 2, rejected: [] });
    const retry = await post(batch);
    expect(retry.status).to.equal(202);
    expect(retry.json()).to.deep.equal({ accepted: 2, stored: 0, rejected: [] });
    const series = (await api.get(`/api/data/All/temperature?groupId=${group}`)).json() as Reading[];
    expect(series).to.have.length(2);
  });

  it('when values are numeric strings (older firmware), then they are stored as numbers', async () => {
    const group = api.unique('box');
    const reply = await post([
      { group, topic: temperature, value: '23.45', time: '2025-06-15T07:00:00Z' },
      { group, time: '2025-06-15T07:00:00Z', values: { [humidity]: ' 61 ' } },
    ]);
    expect(reply.json()).to.deep.equal({ accepted: 2, stored: 2, rejected: [] });
    const latest = await latestOf(group);
    expect(latest.map((reading) => [reading.topic, reading.value])).to.have.deep.members([
      [temperature, 23.45],
      [humidity, 61],
    ]);
  });

  it('when time is omitted, then the reading is stamped with the time of arrival', async () => {
    const group = api.unique('box');
    await post({ group, topic: temperature, value: 20 });
    expect((await latestOf(group))[0]?.time).to.equal(testNow.toISOString());
  });

  it(`when a batch of exactly ${MAX_READINGS_PER_BATCH} readings is sent, then all are accepted (the body fits the limit)`, async () => {
    const group = `${api.unique('box')}-`.padEnd(100, 'x');
    const start = Date.parse('2025-06-10T00:00:00Z');
    const batch = Array.from({ length: MAX_READINGS_PER_BATCH }, (_, i) => ({
      group,
      topic: 'esp/ground/moisture/1',
      value: (i % 1000) / 10,
      time: new Date(start + i * 60_000).toISOString(),
    }));
    // Pretty-printed with the longest group name: well over the 1 MB limit of the other routes.
    const body = JSON.stringify(batch, null, 2);
    expect(body.length).to.be.greaterThan(1024 * 1024);
    const reply = await api.call('POST', '/api/data/readings', {
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).to.equal(202);
    expect(reply.json()).to.deep.equal({
      accepted: MAX_READINGS_PER_BATCH,
      stored: MAX_READINGS_PER_BATCH,
      rejected: [],
    });
  });

  describe('refused as a whole (nothing is stored)', () => {
    it(`when a batch holds more than ${MAX_READINGS_PER_BATCH} items or readings, then 400 {message}`, async () => {
      const group = api.unique('box');
      const items = Array.from({ length: MAX_READINGS_PER_BATCH + 1 }, (_, i) => ({
        group,
        topic: temperature,
        value: i,
        time: new Date(Date.parse('2025-06-01T00:00:00Z') + i * 1000).toISOString(),
      }));
      const tooMany = await post(items);
      expect(tooMany.status).to.equal(400);
      expect(tooMany.json()).to.deep.equal({ message: 'body must hold at most 5000 items' });
      const values = Object.fromEntries(items.map((item, i) => [`esp/sensor/${i}`, item.value]));
      const tooManyValues = await post({ group, values });
      expect(tooManyValues.status).to.equal(400);
      expect(tooManyValues.json()).to.deep.equal({ message: 'readings must hold at most 5000 readings' });
      expect(await latestOf(group)).to.deep.equal([]);
    });

    it('when no reading is valid, then 400 {message, rejected} naming each', async () => {
      const group = api.unique('box');
      const single = await post({ group: 5, topic: temperature, value: 1 });
      expect(single.status).to.equal(400);
      expect(single.json()).to.deep.equal({
        message: 'group must be a string',
        rejected: [{ index: 0, reason: 'group must be a string' }],
      });
      const batch = await post([
        { group, topic: temperature, value: null },
        { group, topic: temperature, value: true },
        [1, 2],
      ]);
      expect(batch.status).to.equal(400);
      expect(batch.json()).to.deep.equal({
        message: 'none of the 3 readings was accepted',
        rejected: [
          { index: 0, reason: 'value must be a finite number' },
          { index: 1, reason: 'value must be a finite number' },
          { index: 2, reason: 'a reading must be an object' },
        ],
      });
      expect(await latestOf(group)).to.deep.equal([]);
    });

    it('when the body holds no readings, then 400 {message}', async () => {
      for (const body of [[], { group: 'g', values: {} }]) {
        const reply = await post(body);
        expect(reply.status, JSON.stringify(body)).to.equal(400);
        expect(reply.json()).to.deep.equal({ message: 'the body holds no readings' });
      }
    });

    it('when the body is not JSON, a bare scalar or not sent as JSON, then 400 or 415 {message}', async () => {
      for (const body of ['[{"group": "g",', '42']) {
        const reply = await api.call('POST', '/api/data/readings', {
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect(reply.status, body).to.equal(400);
        expect(reply.json()).to.deep.equal({ message: 'Request body is not valid JSON' });
      }
      const form = await api.call('POST', '/api/data/readings', {
        body: 'group=g&topic=t&value=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).to.equal(415);
      expect(form.json()).to.deep.equal({ message: 'Content-Type must be application/json' });
    });

    it('when the body is larger than the ingest limit (4 MiB), then 413 {message} naming that limit', async () => {
      const limit = 4 * 1024 * 1024;
      const reply = await post({ group: 'g', topic: temperature, value: 1, padding: 'x'.repeat(limit) });
      expect(reply.status).to.equal(413);
      expect(reply.json()).to.deep.equal({ message: `Request body is larger than ${limit} bytes` });
    });
  });

  it('is described in the OpenAPI document with its loose body schema and its answers', async () => {
    const document = (await api.get('/api/openapi.json')).json() as {
      paths: Record<string, Record<string, { requestBody: unknown; responses: Record<string, unknown> }>>;
    };
    const operation = document.paths['/api/data/readings']?.['post'];
    expect(operation?.requestBody).to.deep.nested.include({
      'content.application/json.schema.type': ['object', 'array'],
      'content.application/json.schema.maxItems': MAX_READINGS_PER_BATCH,
    });
    expect(Object.keys(operation?.responses ?? {})).to.include.members(['202', '400', '413', '415']);
  });
});

describe('HTTP GET /api/data/export', () => {
  let api: TestServer;
  let group: string;
  before(async () => {
    api = await startTestServer();
    group = api.unique('export');
    const readings = [];
    for (let i = 0; i < 5; i += 1) {
      readings.push({ group, topic: temperature, value: 20 + i, time: `2025-06-15T10:0${i}:00Z` });
      readings.push({ group, topic: humidity, value: 50 + i, time: `2025-06-15T10:0${i}:00Z` });
    }
    expect((await api.call('POST', '/api/data/readings', { json: readings })).status).to.equal(202);
  });
  after(async () => {
    await api.close();
  });

  it('when a group is exported as CSV, then the download is text/csv, named after the group, by topic then time', async () => {
    const reply = await api.get(`/api/data/export?groupId=${group}`);

    expect(reply.status).to.equal(200);
    expect(reply.headers.get('content-type')).to.match(/^text\/csv/u);
    expect(reply.headers.get('content-disposition')).to.equal(`attachment; filename="${group}.csv"`);
    const lines = reply.text.trimEnd().split('\n');
    expect(lines[0]).to.equal('group,topic,value,time');
    expect(lines.slice(1, 3)).to.deep.equal([
      `${group},${humidity},50,2025-06-15T10:00:00.000Z`,
      `${group},${humidity},51,2025-06-15T10:01:00.000Z`,
    ]);
    expect(lines).to.have.length(11);
    expect(lines.at(-1)).to.equal(`${group},${temperature},24,2025-06-15T10:04:00.000Z`);
  });

  it('when a topic, from, to and format=ndjson are given, then only those readings come, one JSON object a line', async () => {
    const reply = await api.get(
      `/api/data/export?groupId=${group}&topic=${temperature}&from=2025-06-15T10:01:00Z&to=2025-06-15T10:02:00Z&format=ndjson`,
    );

    expect(reply.status).to.equal(200);
    expect(reply.headers.get('content-type')).to.match(/^application\/x-ndjson/u);
    expect(
      reply.text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).to.deep.equal([
      { group, topic: temperature, value: 21, time: '2025-06-15T10:01:00.000Z' },
      { group, topic: temperature, value: 22, time: '2025-06-15T10:02:00.000Z' },
    ]);
  });

  it('when a topic starts like a spreadsheet formula, then its cell is quoted behind a single quote, and a negative value stays a number', async () => {
    const risky = api.unique('formula');
    const sent = [
      {
        group: risky,
        topic: '=HYPERLINK("https://evil.example")',
        value: -3.5,
        time: '2025-06-15T10:00:00Z',
      },
      { group: risky, topic: '@SUM(A1)', value: 1, time: '2025-06-15T10:00:00Z' },
      { group: risky, topic: '-2', value: 2, time: '2025-06-15T10:00:00Z' },
    ];
    expect((await api.call('POST', '/api/data/readings', { json: sent })).status).to.equal(202);
    const reply = await api.get(`/api/data/export?groupId=${risky}`);
    expect(reply.status).to.equal(200);
    expect(reply.text.trimEnd().split('\n').slice(1)).to.deep.equal([
      `${risky},"'-2",2,2025-06-15T10:00:00.000Z`,
      `${risky},"'=HYPERLINK(""https://evil.example"")",-3.5,2025-06-15T10:00:00.000Z`,
      `${risky},"'@SUM(A1)",1,2025-06-15T10:00:00.000Z`,
    ]);
  });

  it('when a parameter is bad, then 400 {message} naming it, before any byte of a download', async () => {
    for (const query of [
      `groupId=${group}&format=xml`,
      `groupId=${group}&from=soon`,
      `groupId=${group}&from=2025-06-16&to=2025-06-15`,
      'format=csv',
    ]) {
      const reply = await api.get(`/api/data/export?${query}`);
      expect(reply.status, query).to.equal(400);
      expect(reply.headers.get('content-type')).to.match(/^application\/json/u);
      expect(Object.keys(reply.json() as object)).to.deep.equal(['message']);
    }
  });

  it('when access keys exist, then it takes the key of the group like the other data routes: none 401, another group 403', async () => {
    const keys = await startTestServer();
    try {
      await keys.seed.group('tomatoes');
      await keys.seed.group('basil');
      const create = keys.container.get(CreateAccessKey);
      const tomatoes = await create.execute({ name: 'tomatoes', kind: 'client', groups: ['tomatoes'] });
      const bearer = { authorization: `Bearer ${tomatoes.secret}` };

      const none = await keys.get('/api/data/export?groupId=tomatoes');
      const other = await keys.call('GET', '/api/data/export?groupId=basil', { headers: bearer });
      const own = await keys.call('GET', '/api/data/export?groupId=tomatoes', { headers: bearer });

      expect(none.status).to.equal(401);
      expect(other.status).to.equal(403);
      expect(own.status).to.equal(200);
      expect(own.text).to.equal('group,topic,value,time\n');
    } finally {
      await keys.close();
    }
  });
});
