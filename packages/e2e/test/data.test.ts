import { expect, startTestServer, type TestServer } from './harness.js';

type Reading = { _id: string; group: string; topic: string; value: number; time: string };

describe('HTTP /api/data', () => {
  let api: TestServer;
  let group: string;
  before(async () => {
    api = await startTestServer();
    group = api.unique('greenhouse');
    // testNow is 2025-06-15T12:30Z; older boxes stored values as text.
    await api.seed.readings([
      { group, topic: 'esp/air/temperature', value: '9.5', time: '2025-06-15T08:10:00Z' },
      { group, topic: 'esp/air/temperature', value: 21, time: '2025-06-15T08:40:00Z' },
      { group, topic: 'esp/air/temperature', value: '100.25', time: '2025-06-15T10:05:00Z' },
      { group, topic: 'esp/air/temperature', value: 18, time: '2025-06-14T23:00:00Z' },
      { group, topic: 'esp/air/humidity', value: 61, time: '2025-06-15T10:00:00Z' },
      { group, topic: 'esp/ground/moisture/1', value: 40, time: '2025-06-15T09:00:00Z' },
      { group, topic: 'esp/ground/moisture/3', value: 33, time: '2025-06-15T09:00:00Z' },
      { group, topic: 'esp/ground/light/lux', value: 8000, time: '2025-06-15T11:00:00Z' },
    ]);
  });
  after(async () => {
    await api.close();
  });

  it('GET /latestdata answers the text "Running..."', async () => {
    const reply = await api.get('/api/data/latestdata');
    expect(reply.status).to.equal(200);
    expect(reply.headers.get('content-type')).to.match(/^text\/plain/u);
    expect(reply.text).to.equal('Running...');
  });

  it('when the latest temperature is asked, then an array with the newest reading, value numeric', async () => {
    const reply = await api.get(`/api/data/latestdata/Temperature?groupId=${group}`);
    expect(reply.status).to.equal(200);
    const readings = reply.json() as Reading[];
    expect(readings).to.have.length(1);
    expect(readings[0]).to.include({
      group,
      topic: 'esp/air/temperature',
      value: 100.25,
      time: '2025-06-15T10:05:00.000Z',
    });
    expect(readings[0]).to.have.all.keys('_id', 'group', 'topic', 'value', 'time');
  });

  it('when the latest of each sensor route is asked, then each answers its own topic', async () => {
    const expected: Record<string, number> = { Humidity: 61, 'Moisture/1': 40, Lux: 8000 };
    for (const [path, value] of Object.entries(expected)) {
      const reply = await api.get(`/api/data/latestdata/${path}?groupId=${group}`);
      expect(
        (reply.json() as Reading[]).map((reading) => reading.value),
        path,
      ).to.deep.equal([value]);
    }
  });

  it('when a group has no readings, then the latest is an empty array', async () => {
    const reply = await api.get(`/api/data/latestdata/Humidity?groupId=${api.unique('empty')}`);
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.deep.equal([]);
  });

  it('when /latestdata/all is asked in lower case, then one newest reading per topic', async () => {
    const reply = await api.get(`/api/data/latestdata/all?groupId=${group}`);
    expect(reply.status).to.equal(200);
    const topics = (reply.json() as Reading[]).map((reading) => reading.topic);
    expect(topics).to.have.members([
      'esp/air/temperature',
      'esp/air/humidity',
      'esp/ground/moisture/1',
      'esp/ground/moisture/3',
      'esp/ground/light/lux',
    ]);
  });

  it('when value filters are given, then they compare numerically (9.5 < 21 < 100.25), newest first', async () => {
    const reply = await api.get(`/api/data/All/temperature?groupId=${group}&minValue=9&maxValue=99`);
    expect(reply.status).to.equal(200);
    expect((reply.json() as Reading[]).map((reading) => reading.value)).to.deep.equal([21, 9.5, 18]);
  });

  it('when a date range and count are given, then only readings inside it, at most count', async () => {
    const reply = await api.get(
      `/api/data/all/temperature?groupId=${group}&startDate=2025-06-15T00:00:00Z&endDate=2025-06-15&count=2`,
    );
    expect((reply.json() as Reading[]).map((reading) => reading.time)).to.deep.equal([
      '2025-06-15T10:05:00.000Z',
      '2025-06-15T08:40:00.000Z',
    ]);
  });

  it('when the moisture 3 and lux ranges are asked, then they answer their topics', async () => {
    const moisture = await api.get(`/api/data/All/moisture/3?groupId=${group}`);
    expect((moisture.json() as Reading[]).map((reading) => reading.value)).to.deep.equal([33]);
    const lux = await api.get(`/api/data/all/lux?groupId=${group}`);
    expect((lux.json() as Reading[]).map((reading) => reading.value)).to.deep.equal([8000]);
  });

  it('when a number filter is not a number, then 400 {message}', async () => {
    const reply = await api.get(`/api/data/All/humidity?groupId=${group}&minValue=abc`);
    expect(reply.status).to.equal(400);
    expect(reply.json()).to.deep.equal({ message: 'minValue must be a number' });
  });

  it('when count is out of range or minValue exceeds maxValue, then 400 {message}', async () => {
    const tooMany = await api.get(`/api/data/All/humidity?groupId=${group}&count=999999`);
    expect(tooMany.status).to.equal(400);
    expect(tooMany.json()).to.deep.equal({ message: 'count must be a whole number from 1 to 10000' });
    const crossed = await api.get(`/api/data/All/humidity?groupId=${group}&minValue=5&maxValue=1`);
    expect(crossed.status).to.equal(400);
  });

  it('when groupId is missing or repeated, then 400 {message}', async () => {
    expect((await api.get('/api/data/latestdata/All')).json()).to.deep.equal({
      message: 'groupId is required',
    });
    const repeated = await api.get('/api/data/latestdata/All?groupId=a&groupId=b');
    expect(repeated.status).to.equal(400);
    expect(repeated.json()).to.deep.equal({ message: 'groupId must be given only once' });
  });

  it("when /tem is asked, then today's earliest temperature of each hour, hours ascending", async () => {
    const reply = await api.get(`/api/data/tem?groupId=${group}`);
    expect(reply.status).to.equal(200);
    const hours = reply.json() as { _id: number; data: Reading }[];
    expect(hours.map((hour) => [hour._id, hour.data.value])).to.deep.equal([
      [8, 9.5],
      [10, 100.25],
    ]);
  });

  it('when /tem has a value filter, then readings are filtered before the hourly pick', async () => {
    const reply = await api.get(`/api/data/tem?groupId=${group}&minValue=10&maxValue=50`);
    expect(
      (reply.json() as { _id: number; data: Reading }[]).map((hour) => [hour._id, hour.data.value]),
    ).to.deep.equal([[8, 21]]);
  });

  describe('GET /series/<topic>: any stored topic', () => {
    let series: string;
    before(async () => {
      series = api.unique('series');
      await api.seed.readings([
        { group: series, topic: 'esp/air/pressure', value: 1012, time: '2025-06-15T08:00:00Z' },
        { group: series, topic: 'esp/air/pressure', value: 1015, time: '2025-06-15T08:30:00Z' },
        { group: series, topic: 'esp/air/pressure', value: 1009, time: '2025-06-15T10:00:00Z' },
        { group: series, topic: 'esp/air/temperature', value: 20, time: '2025-06-15T10:00:00Z' },
        { group: series, topic: 'Odd Topic', value: 1, time: '2025-06-15T10:00:00Z' },
      ]);
    });

    it('when a topic with slashes is asked, then its readings, newest first, as the history routes answer', async () => {
      const reply = await api.get(`/api/data/series/esp/air/pressure?groupId=${series}`);
      expect(reply.status).to.equal(200);
      const readings = reply.json() as Reading[];
      expect(readings.map(({ value }) => value)).to.deep.equal([1009, 1015, 1012]);
      expect(readings[0]).to.have.all.keys('_id', 'group', 'topic', 'value', 'time');
      expect(readings[0]).to.include({ group: series, topic: 'esp/air/pressure' });
    });

    it('when filters and count are given, then they apply as on the history routes', async () => {
      const reply = await api.get(
        `/api/data/series/esp/air/pressure?groupId=${series}&startDate=2025-06-15T08:10:00Z&minValue=1010&count=1`,
      );
      expect((reply.json() as Reading[]).map(({ value }) => value)).to.deep.equal([1015]);
    });

    it('when interval or points is given, then buckets, the same as the history route of that topic', async () => {
      const query = `groupId=${series}&startDate=2025-06-15T00:00:00Z&endDate=2025-06-15T12:00:00Z`;
      const hourly = await api.get(`/api/data/series/esp/air/pressure?${query}&interval=1h`);
      expect(hourly.status).to.equal(200);
      expect(hourly.json()).to.deep.equal([
        { time: '2025-06-15T10:00:00.000Z', min: 1009, max: 1009, avg: 1009, count: 1 },
        { time: '2025-06-15T08:00:00.000Z', min: 1012, max: 1015, avg: 1013.5, count: 2 },
      ]);
      const viaSeries = await api.get(`/api/data/series/esp/air/temperature?${query}&points=4`);
      const viaSpec = await api.get(`/api/data/All/temperature?${query}&points=4`);
      expect(viaSeries.json()).to.deep.equal(viaSpec.json());
    });

    it('when the topic is percent-encoded, then it is decoded; an unknown topic answers []', async () => {
      const odd = await api.get(`/api/data/series/Odd%20Topic?groupId=${series}`);
      expect((odd.json() as Reading[]).map(({ topic }) => topic)).to.deep.equal(['Odd Topic']);
      const none = await api.get(`/api/data/series/esp/air/nothing?groupId=${series}`);
      expect(none.status).to.equal(200);
      expect(none.json()).to.deep.equal([]);
    });

    it('when parameters are bad, then 400 {message} as on the history routes', async () => {
      const cases: [string, string][] = [
        [`/api/data/series/esp/air/pressure`, 'groupId is required'],
        [`/api/data/series/esp/air/pressure?groupId=${series}&minValue=abc`, 'minValue must be a number'],
        [
          `/api/data/series/esp/air/pressure?groupId=${series}&count=999999`,
          'count must be a whole number from 1 to 10000',
        ],
        [
          `/api/data/series/esp/%23?groupId=${series}`,
          'topic must not contain MQTT wildcards or control characters',
        ],
      ];
      for (const [path, message] of cases) {
        const reply = await api.get(path);
        expect(reply.status, path).to.equal(400);
        expect(reply.json(), path).to.deep.equal({ message });
      }
      const interval = await api.get(`/api/data/series/esp/air/pressure?groupId=${series}&interval=soon`);
      expect(interval.status).to.equal(400);
      expect(Object.keys(interval.json() as object)).to.deep.equal(['message']);
    });

    it('when readings are polled with an ETag, then the tag differs per topic and 304 follows while unchanged', async () => {
      const pressure = await api.get(`/api/data/series/esp/air/pressure?groupId=${series}`);
      const temperature = await api.get(`/api/data/series/esp/air/temperature?groupId=${series}`);
      const tag = pressure.headers.get('etag') ?? '';
      expect(tag).to.not.equal('');
      expect(temperature.headers.get('etag')).to.not.equal(tag);
      const again = await api.call('GET', `/api/data/series/esp/air/pressure?groupId=${series}`, {
        headers: { 'if-none-match': tag },
      });
      expect(again.status).to.equal(304);
      const other = await api.call('GET', `/api/data/series/esp/air/temperature?groupId=${series}`, {
        headers: { 'if-none-match': tag },
      });
      expect(other.status).to.equal(200);
    });
  });
});
