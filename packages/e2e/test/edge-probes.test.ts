import { MAX_QUERY_PARAMETERS, parseQuery, tooManyParametersMessage } from '@hortus/http-koa';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import sinon from 'sinon';
import { expect, startTestServer, type TestServer } from './harness.js';

interface Answer {
  readonly status: number;
  readonly text: string;
}

/** Node's client, not fetch: it sends Host and X-Forwarded-Host as given. */
function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const portOf = (url: string): number => Number(new URL(url).port);

/** A socket to the server from the given local address, open once connected. */
function socketFrom(url: string, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: portOf(url), localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Whether the server closes the socket within `ms` (an idle connection it accepted stays open). */
function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed || socket.readableEnded) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => resolve(false), ms);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('The edge against the third probe', function () {
  this.timeout(30_000);

  describe('deeply nested JSON (probe 3)', () => {
    let api: TestServer;
    before(async () => {
      api = await startTestServer();
    });
    after(async () => {
      await api.close();
    });

    it('when a megabyte of [[[…]]] is posted without credentials, then 400 before any JSON parsing of it', async () => {
      const levels = 500_000;
      const body = `${'['.repeat(levels)}1${']'.repeat(levels)}`;
      const parse = sinon.spy(JSON, 'parse');
      let answer: Answer;
      try {
        answer = await send(api.url, 'POST', '/api/auth', { 'content-type': 'application/json' }, body);
      } finally {
        parse.restore();
      }
      expect(answer.status).to.equal(400);
      expect(answer.text).to.contain('nested deeper than 32 levels');
      const parsedTheBody = parse.getCalls().some((call) => call.args[0] === body);
      expect(parsedTheBody, 'JSON.parse was given the nested body').to.equal(false);
    });
  });

  describe('one Host check for both request paths (probe 5)', () => {
    let api: TestServer;
    let group: string;
    before(async () => {
      api = await startTestServer();
      group = api.unique('host');
      await api.seed.group(group);
    });
    after(async () => {
      await api.close();
    });

    it('when Host lists a foreign name before an allowed one, then the poll lane and the Koa chain both answer 421', async () => {
      // Served first with the Host alone: the lane then knows that no keys are needed, and takes polls.
      const alone = { host: `localhost:${portOf(api.url)}` };
      expect((await send(api.url, 'GET', `/api/group/abo?group=${group}`, alone)).status).to.equal(200);
      expect((await send(api.url, 'GET', `/api/group/checkgroup?group=${group}`, alone)).status).to.equal(
        200,
      );
      const host = 'evil.example, a.localhost';
      const polled = await send(api.url, 'GET', `/api/group/abo?group=${group}`, { host });
      const routed = await send(api.url, 'GET', `/api/group/checkgroup?group=${group}`, { host });
      expect([polled.status, routed.status]).to.deep.equal([421, 421]);
    });
  });

  describe('the count of query parameters (probe 18)', () => {
    let api: TestServer;
    let group: string;
    before(async () => {
      api = await startTestServer();
      group = api.unique('query');
      await api.seed.group(group);
    });
    after(async () => {
      await api.close();
    });

    it('when a query repeats one name thousands of times, then both paths answer 400 without parsing it', async () => {
      const flood = `group=${group}${'&a='.repeat(5300)}`;
      for (const path of [`/api/group/abo?${flood}`, `/api/group/checkgroup?${flood}`]) {
        const answer = await send(api.url, 'GET', path, {});
        expect(answer.status, path.slice(0, 20)).to.equal(400);
        expect(answer.text, path.slice(0, 20)).to.contain(tooManyParametersMessage);
      }
    });

    it(`when a query has ${MAX_QUERY_PARAMETERS} parameters or fewer, then it is parsed, repeated names as arrays`, async () => {
      const most = `group=${group}${'&x=1'.repeat(MAX_QUERY_PARAMETERS - 1)}`;
      expect((await send(api.url, 'GET', `/api/group/abo?${most}`, {})).status).to.equal(200);
      expect(parseQuery('a=1&a=2&a=3&b=%20')).to.deep.equal({ a: ['1', '2', '3'], b: ' ' });
    });
  });

  describe('X-Forwarded-Host behind TRUST_PROXY (probe 19)', () => {
    it('when a client sends a foreign Host with an allowed X-Forwarded-Host, then 421: the Host sent is checked too', async () => {
      const api = await startTestServer({ TRUST_PROXY: '1' });
      try {
        const forged = { host: 'attacker.example', 'x-forwarded-host': 'localhost' };
        expect((await send(api.url, 'GET', '/api/group/checkgroup?group=a', forged)).status).to.equal(421);
        expect((await send(api.url, 'GET', '/api', forged)).status).to.equal(421);
      } finally {
        await api.close();
      }
    });

    it('when X-Forwarded-Host comes from a trusted proxy, then it is checked; from anyone else, it is ignored', async () => {
      const trusting = await startTestServer({ TRUST_PROXY: '127.0.0.1' });
      const elsewhere = await startTestServer({ TRUST_PROXY: '10.0.0.0/8' });
      try {
        const forwarded = { host: 'localhost', 'x-forwarded-host': 'attacker.example' };
        expect((await send(trusting.url, 'GET', '/api', forwarded)).status).to.equal(421);
        expect((await send(elsewhere.url, 'GET', '/api', forwarded)).status).to.equal(200);
        const allowed = { host: 'localhost', 'x-forwarded-host': 'app.localhost' };
        expect((await send(trusting.url, 'GET', '/api', allowed)).status).to.equal(200);
      } finally {
        await Promise.all([trusting.close(), elsewhere.close()]);
      }
    });
  });

  describe("each address's share of MAX_CONNECTIONS (probe 25)", () => {
    it('when one address holds its share of connections, then its next is closed and other addresses still get answers', async () => {
      const api = await startTestServer({ MAX_CONNECTIONS: '8', MAX_CONNECTIONS_PER_ADDRESS: '2' });
      const held: Socket[] = [];
      try {
        held.push(await socketFrom(api.url, '127.0.0.2'), await socketFrom(api.url, '127.0.0.2'));
        const third = await socketFrom(api.url, '127.0.0.2');
        held.push(third);
        expect(await closedWithin(third, 2000), 'the third connection from one address').to.equal(true);
        expect(await closedWithin(held[0] as Socket, 200), 'a connection within the share').to.equal(false);
        expect((await send(api.url, 'GET', '/healthz', {})).status).to.equal(200);
      } finally {
        for (const socket of held) socket.destroy();
        await api.close();
      }
    });
  });
});
