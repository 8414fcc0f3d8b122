import { request } from 'node:http';
import { expect, startTestServer, type TestServer } from './harness.js';
import { type ServedProcess, spawnServe, describeOncePerRun } from './served-process.js';

const FIVE_MB = 5 * 1024 * 1024;

/** Node's own client, which writes the whole body before it reads: the client that used to see a reset. */
function postLargeBody(
  url: string,
  path: string,
  chunked: boolean,
): Promise<{ status: number | undefined; body: string }> {
  const target = new URL(path, url);
  const body = Buffer.alloc(FIVE_MB, 'a');
  return new Promise((resolve, reject) => {
    const outgoing = request(
      target,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(chunked ? {} : { 'content-length': String(body.length) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, body: text }));
      },
    );
    outgoing.on('error', reject);
    if (chunked) {
      for (let offset = 0; offset < body.length; offset += 64 * 1024) {
        outgoing.write(body.subarray(offset, offset + 64 * 1024));
      }
      outgoing.end();
    } else {
      outgoing.end(body);
    }
  });
}

/** Node's own client sending a 5 MB JSON body with PUT, as a web page's code on a server might. */
function putLargeJson(url: string, path: string): Promise<{ status: number | undefined; body: string }> {
  const body = largeSettings();
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL(path, url),
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, body: text }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Valid JSON of 5 MB: `{"settings":"aaa…"}`. */
function largeSettings(): Buffer {
  return Buffer.from(`{"settings":"${'a'.repeat(FIVE_MB)}"}`);
}

describe('HTTP: a body over the limit', () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer();
  });
  after(async () => {
    await api.close();
  });

  for (const chunked of [true, false]) {
    const framing = chunked ? 'chunked' : 'with a Content-Length';
    it(`when Node's http client sends 5 MB ${framing} 20 times in a row, then every try reads the 413`, async () => {
      const userId = await api.seed.user(`${api.unique('big')}@example.org`);
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const reply = await postLargeBody(api.url, `/api/historyChart/update/${userId}`, chunked);
        expect(reply.status, `attempt ${attempt}`).to.equal(413);
        expect(JSON.parse(reply.body)).to.deep.equal({ error: 'Request body is larger than 1048576 bytes' });
      }
    });
  }

  it('when the ingest route gets more than its larger limit, then it answers 413 too and stores nothing', async () => {
    const group = api.unique('flood');
    const reply = await postLargeBody(api.url, `/api/data/readings?group=${group}`, true);
    expect(reply.status).to.equal(413);
    const latest = await api.get(`/api/data/latestdata/All?groupId=${group}`);
    expect(latest.json()).to.deep.equal([]);
  });
});

// A server in a process of its own: in one process the client and the server take turns on one event loop,
// and the server never closes the connection while the client is still writing, so the reset never shows.
describeOncePerRun('HTTP: a body over the limit, sent to a server in another process', function () {
  this.timeout(60_000);
  let served: ServedProcess;
  before(async () => {
    served = await spawnServe();
  });
  after(async () => {
    await served.cleanUp();
  });

  it("when Node's http client PUTs 5 MB of group settings 10 times, then every try reads the 413 in the route's {message} shape", async () => {
    const group = 'big-settings';
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const reply = await putLargeJson(served.url, `/api/group/update?groupId=${group}`);
      expect(reply.status, `attempt ${attempt}`).to.equal(413);
      expect(JSON.parse(reply.body)).to.deep.equal({ message: 'Request body is larger than 1048576 bytes' });
    }
  });

  it("when fetch PUTs 5 MB of group settings 10 times, then every try reads the 413 in the route's {message} shape", async () => {
    const group = 'big-settings';
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const response = await fetch(`${served.url}/api/group/update?groupId=${group}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: largeSettings(),
      });
      expect(response.status, `attempt ${attempt}`).to.equal(413);
      expect(await response.json()).to.deep.equal({ message: 'Request body is larger than 1048576 bytes' });
    }
  });
});
