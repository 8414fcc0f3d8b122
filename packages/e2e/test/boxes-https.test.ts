import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, startTestServer, type TestServer, testStore } from './harness.js';

/** A request as the firmware makes it: a new TLS connection each time, and no certificate check. */
function insecure(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method, headers, rejectUnauthorized: false, agent: false }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    }).on('error', reject);
    sent.end(body);
  });
}

describe(`Boxes of firmware 1.0.4 over HTTPS without certificate checks (${testStore} store)`, () => {
  let api: TestServer;
  let tlsDir: string;
  before(async () => {
    tlsDir = mkdtempSync(join(tmpdir(), 'hortus-boxes-tls-'));
    // TLS=self-signed keeps its certificate in the data directory: the SQLite pass has one of its own.
    api = await startTestServer({
      TLS: 'self-signed',
      HTTPS_PORT: '0',
      ...(testStore === 'sqlite' ? {} : { HORTUS_DATA_DIR: tlsDir }),
    });
  });
  after(async () => {
    await api.close();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  it('when a box onboards over HTTPS, then it is sent to the host it reached, and its reading and its find go through there', async () => {
    const httpsUrl = api.running.httpsUrl ?? '';
    expect(httpsUrl).to.match(/^https:\/\/127\.0\.0\.1:\d+$/u);
    await api.seed.group('tls-box');
    await api.seed.device('24:6F:28:AA:EE:01', 'tls-box');
    await api.seed.action('tls-box', 'pump_1', 'on');

    const onboarding = await insecure(`${httpsUrl}/api/hardware`, 'GET', {
      deviceId: '1eeaa286f24',
      updateVersion: '1.0.4',
      lastactive: '5230',
      'Content-Type': 'application/json',
    });
    expect(onboarding.status, onboarding.text).to.equal(200);
    const box = JSON.parse(onboarding.text) as { group: string; host: string; url: string; apiKey: string };
    expect(`https://${box.host}`).to.equal(httpsUrl);

    const inserted = await insecure(
      `https://${box.host}${box.url}/action/insertOne`,
      'POST',
      { 'Content-Type': 'application/ejson', Accept: 'application/json', 'api-key': box.apiKey },
      JSON.stringify({
        collection: 'datas',
        database: 'Website',
        dataSource: 'Cluster0',
        document: {
          topic: 'esp/air/temperature',
          group: box.group,
          value: '21.37',
          time: { $date: '2025-06-15T14:29:40.000Z' },
        },
      }),
    );
    const found = await insecure(
      `https://${box.host}${box.url}/action/find`,
      'POST',
      { 'Content-Type': 'application/json', 'api-key': box.apiKey },
      JSON.stringify({ collection: 'actions', database: 'Website', dataSource: 'Cluster0' }),
    );

    expect(inserted.status, inserted.text).to.equal(201);
    expect(found.status).to.equal(200);
    expect(
      (JSON.parse(found.text) as { documents: { object: string; value: string }[] }).documents,
    ).to.deep.include.members([
      {
        ...(JSON.parse(found.text) as { documents: Record<string, unknown>[] }).documents[0],
        object: 'pump_1',
        value: 'on',
      },
    ]);
    const latest = (await api.get('/api/data/latestdata/All?groupId=tls-box')).json() as {
      time: string;
      value: number;
    }[];
    expect(latest.map(({ time, value }) => ({ time, value }))).to.deep.equal([
      { time: '2025-06-15T12:29:40.000Z', value: 21.37 },
    ]);
  });
});
