import { SQLITE_CONNECTION, type SqliteConnection } from '@hortus/adapter-sqlite';
import { expect, startTestServer, type TestServer } from './harness.js';

/*
 * The embedded store's faults as a client sees them: a disk that is full answers 503 JSON with Retry-After,
 * like a MongoDB outage, keeps nothing half-written, and reads go on.
 */
describe('Faults on the SQLite store: a full disk', () => {
  let api: TestServer;
  let connection: SqliteConnection;
  before(async () => {
    api = await startTestServer({}, undefined, { store: 'sqlite' });
    connection = api.container.get<SqliteConnection>(SQLITE_CONNECTION);
  });
  after(async () => {
    await api.close();
  });

  it('when the file may not grow, then writes answer 503 JSON with Retry-After, nothing is kept, reads go on, and writes resume once there is room', async () => {
    const group = api.unique('full');
    await api.seed.group(group);
    const first = await api.call('POST', '/api/data/readings', {
      json: { group, topic: 'esp/air/temperature', value: 20, time: '2025-06-15T12:00:00Z' },
    });
    expect(first.status).to.equal(202);

    const pages = connection.database.pragma('page_count', { simple: true }) as number;
    // A database that may not grow past its current size behaves as a full disk does: SQLITE_FULL.
    connection.database.pragma(`max_page_count = ${pages}`);
    const batch = Array.from({ length: 5000 }, (_, i) => ({
      group,
      topic: `esp/ground/moisture/${i % 3}`,
      value: i,
      time: new Date(Date.UTC(2025, 5, 15, 11, 0, 0) + i * 1000).toISOString(),
    }));
    const full = await api.call('POST', '/api/data/readings', { json: batch });

    expect(full.status).to.equal(503);
    expect(full.headers.get('content-type')).to.match(/^application\/json/u);
    expect(full.headers.get('retry-after')).to.equal('5');
    expect(full.json()).to.have.property('message').that.is.a('string');
    expect(full.text).not.to.match(/SQLITE|at \w+ \(/u);
    const latest = await api.get(`/api/data/latestdata/All?groupId=${group}`);
    expect(latest.status).to.equal(200);
    expect((latest.json() as { topic: string }[]).map((reading) => reading.topic)).to.deep.equal([
      'esp/air/temperature',
    ]);

    connection.database.pragma('max_page_count = 1073741823');
    const again = await api.call('POST', '/api/data/readings', { json: batch });
    expect(again.status).to.equal(202);
  });
});
