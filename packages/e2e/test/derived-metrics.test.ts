import { BackfillMetrics } from '@hortus/core';
import { onboarded } from './box-requests.js';
import { expect, startTestServer, type TestServer, testNow } from './harness.js';

type Reading = { group: string; topic: string; value: number; time: string };
const on = { vpd: true, dewPoint: true, dli: true, light: 'sunlight' };

describe('derived series over HTTP (latestdata, history, export, settings, refused on ingest)', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  /** A group with every series on and an hour of box rounds every 5 minutes before testNow, derived. */
  async function derivedGroup(): Promise<string> {
    const group = api.unique('derived');
    await api.seed.group(group, [{ metrics: on }]);
    const rounds = Array.from(
      { length: 12 },
      (_, i) => new Date(testNow.getTime() - 3_600_000 + i * 300_000),
    );
    await api.seed.readings(
      rounds.flatMap((time, i) => [
        { group, topic: 'esp/air/temperature', value: 20 + i / 4, time: time.toISOString() },
        { group, topic: 'esp/air/humidity', value: 60, time: new Date(time.getTime() + 2000).toISOString() },
        { group, topic: 'esp/ground/light/lux', value: 20_000, time: time.toISOString() },
      ]),
    );
    await api.container.get(BackfillMetrics).execute({ group });
    return group;
  }

  it('when a group has the series on, then latestdata/All holds them and each has its latestdata route', async () => {
    const group = await derivedGroup();
    const all = (await api.get(`/api/data/latestdata/All?groupId=${group}`)).json() as Reading[];
    expect(
      all.map((reading) => reading.topic).filter((topic) => topic.startsWith('esp/derived/')),
    ).to.have.members(['esp/derived/vpd', 'esp/derived/dew_point', 'esp/derived/ppfd', 'esp/derived/dli']);
    for (const [path, topic] of [
      ['VPD', 'esp/derived/vpd'],
      ['DewPoint', 'esp/derived/dew_point'],
      ['PPFD', 'esp/derived/ppfd'],
      ['dli', 'esp/derived/dli'],
    ] as const) {
      const reply = await api.get(`/api/data/latestdata/${path}?groupId=${group}`);
      expect(reply.status).to.equal(200);
      const [latest] = reply.json() as Reading[];
      expect(latest?.topic).to.equal(topic);
    }
    const [ppfd] = (await api.get(`/api/data/latestdata/PPFD?groupId=${group}`)).json() as Reading[];
    expect(ppfd?.value).to.equal(370);
    // 55 minutes at 370 µmol m⁻² s⁻¹ since the first round of the day.
    const [dli] = (await api.get(`/api/data/latestdata/DLI?groupId=${group}`)).json() as Reading[];
    expect(dli?.value).to.be.closeTo((370 * 55 * 60) / 1e6, 0.001);
  });

  it('when the history of a derived series is asked, then readings, buckets at any zoom and CSV/NDJSON exports answer it', async () => {
    const group = await derivedGroup();
    const series = (await api.get(`/api/data/series/esp/derived/vpd?groupId=${group}`)).json() as Reading[];
    expect(series).to.have.lengthOf(12);
    for (const interval of ['5m', '1h', '1d']) {
      const buckets = await api.get(
        `/api/data/series/esp/derived/vpd?groupId=${group}&interval=${interval}&startDate=2025-06-15T00:00:00Z`,
      );
      expect(buckets.status).to.equal(200);
      const counts = (buckets.json() as { count: number }[]).reduce((sum, bucket) => sum + bucket.count, 0);
      expect(counts, interval).to.equal(12);
    }
    const csv = await api.get(`/api/data/export?groupId=${group}&topic=esp/derived/dew_point`);
    expect(csv.text.trim().split('\n')).to.have.lengthOf(13);
    const ndjson = await api.get(`/api/data/export?groupId=${group}&topic=esp/derived/dli&format=ndjson`);
    expect(ndjson.text.trim().split('\n')).to.have.lengthOf(12);
  });

  it('when a group has the series off, then latestdata/All and the derived routes answer as before', async () => {
    const group = api.unique('plain');
    await api.seed.group(group);
    await api.seed.readings([
      { group, topic: 'esp/air/temperature', value: 20, time: '2025-06-15T12:00:00Z' },
    ]);
    await api.container
      .get(BackfillMetrics)
      .execute({ group })
      .catch(() => undefined);
    const all = (await api.get(`/api/data/latestdata/All?groupId=${group}`)).json() as Reading[];
    expect(all.map((reading) => reading.topic)).to.deep.equal(['esp/air/temperature']);
    expect((await api.get(`/api/data/latestdata/VPD?groupId=${group}`)).json()).to.deep.equal([]);
  });

  it('when group settings are written over HTTP with a bad metrics key, then 400 and the settings are unchanged', async () => {
    const group = api.unique('settings');
    await api.seed.group(group, [{ metrics: on }]);
    const bad = await api.call('PUT', `/api/group/update?groupId=${group}`, {
      json: { settings: [{ metrics: { vpd: true, dayStart: 'dawn' } }] },
    });
    expect(bad.status).to.equal(400);
    expect((bad.json() as { message: string }).message).to.match(/dayStart/u);
    const good = await api.call('PUT', `/api/group/update?groupId=${group}`, {
      json: { settings: [{ metrics: { dli: true, dayStart: '06:00', light: 0.0141 } }] },
    });
    expect(good.status).to.equal(200);
    expect((await api.get(`/api/group/settings?groupId=${group}`)).json()).to.deep.equal([
      { metrics: { dli: true, dayStart: '06:00', light: 0.0141 } },
    ]);
  });

  it('when a client or a box sends a reading under esp/derived/, then it is refused (HTTP 400, box endpoint 400) and nothing is stored', async () => {
    const group = api.unique('forger');
    await api.seed.group(group);
    const posted = await api.call('POST', '/api/data/readings', {
      json: { group, topic: 'esp/derived/vpd', value: 0.9, time: '2025-06-15T12:00:00Z' },
    });
    expect(posted.status).to.equal(400);
    expect((posted.json() as { message: string }).message).to.match(/esp\/derived\//u);

    await api.seed.device('24:6F:28:DE:01:01', group);
    const box = await onboarded(api, '101de286f24');
    const boxed = await api.call('POST', `${box.url}/action/insertOne`, {
      headers: { 'Content-Type': 'application/ejson', 'api-key': box.apiKey },
      body: JSON.stringify({
        collection: 'datas',
        document: {
          topic: 'esp/derived/dli',
          group,
          value: '12.00',
          time: { $date: '2025-06-15T12:00:00.000Z' },
        },
      }),
    });
    expect(boxed.status).to.be.within(400, 499);
    expect((await api.get(`/api/data/latestdata/All?groupId=${group}`)).json()).to.deep.equal([]);
  });
});
