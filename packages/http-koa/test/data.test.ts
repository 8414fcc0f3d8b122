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
});
