import { CreateAccessKey } from '@hortus/core';
import { HttpServer } from '@hortus/http-koa';
import { connect } from 'node:net';
import { expect, startTestServer, type TestServer } from './harness.js';
import { onboarded } from './box-requests.js';
import {
  laneAnswers,
  type LaneTwin,
  requestLines,
  requestSeries,
  see,
  type Seen,
  startLaneTwin,
} from './lane-twin.js';

/**
 * The box lane answers the firmware's requests to the box endpoint in front of Koa. Whatever it answers must
 * be exactly what Koa would: each request goes to a twin on the same store with the lanes turned off and to
 * the server as configured, and the two answers (status, headers, body), request lines and metrics must be
 * the same. An insert is a write: the twin stores it first, so the server sees it again as the box's retry,
 * and the second half of the inserts goes the other way round. The lane's own counter shows what it took.
 */

/** A body with its Content-Length, as the firmware's HTTPClient sends it. */
function sized(headers: Record<string, string>, body: string): Record<string, string> {
  return { ...headers, 'content-length': String(Buffer.byteLength(body)) };
}

describe('The box lane', function () {
  this.timeout(30_000);
  let api: TestServer;
  let twin: LaneTwin;
  let group: string;
  let apiKey: string;

  before(async () => {
    api = await startTestServer({ RATE_LIMIT_PER_MINUTE: '100000' });
    twin = await startLaneTwin(api);
    group = api.unique('box-lane');
    await api.seed.group(group);
    await api.seed.device('24:6F:28:AA:7E:01', group);
    await api.seed.action(group, 'pump_1');
    ({ apiKey } = await onboarded(api, '17eaa286f24'));
  });

  after(async () => {
    await twin?.close();
    await api?.close();
  });

  /** Sends one request to `first` then `second` (twin and server in either order) and compares the answers. */
  async function compare(
    path: string,
    headers: Record<string, string>,
    body: string,
    serverFirst = false,
  ): Promise<Seen> {
    const sending = { method: 'POST', headers, body, ownConnection: true };
    const twinSees = (): Promise<Seen> => see(twin.url, path, sending);
    const serverSees = (): Promise<Seen> => see(api.url, path, sending);
    const [viaKoa, viaServer] = serverFirst
      ? await serverSees().then(async (server) => [await twinSees(), server])
      : await twinSees().then(async (koa) => [koa, await serverSees()]);
    expect(viaServer, `${path} ${JSON.stringify(headers)} ${body.slice(0, 200)}`).to.deep.equal(viaKoa);
    return viaServer as Seen;
  }

  const ejson = (): Record<string, string> => ({
    'content-type': 'application/ejson',
    accept: 'application/json',
    'api-key': apiKey,
    'user-agent': 'ESP32HTTPClient',
  });
  const document = (topic: string, value: unknown, stamp: string): string =>
    JSON.stringify({
      collection: 'datas',
      database: 'Website',
      dataSource: 'Cluster0',
      document: { topic, group, value, time: { $date: stamp } },
    });
  const insertPath = '/api/box/v1/action/insertOne';

  it("when a box inserts and finds as the firmware does, then the lane answers as Koa does, in either order of the box's retry", async () => {
    const before = laneAnswers(twin.laneMetrics, 'box');
    const topics = ['esp/air/temperature', 'esp/air/humidity', 'esp/ground/light/lux'];
    for (const [index, topic] of topics.entries()) {
      for (const serverFirst of [false, true]) {
        // The test clock stands at 2025-06-15T12:30:00Z: Berlin's wall clock is 14:xx.
        const stamp = `2025-06-15T14:2${index}:0${serverFirst ? 1 : 0}Z`;
        const body = document(topic, '21.37', stamp);
        const answer = await compare(insertPath, sized(ejson(), body), body, serverFirst);
        expect(answer.status, answer.body).to.equal(201);
      }
    }
    const many = JSON.stringify({
      collection: 'datas',
      documents: [
        {
          topic: 'esp/air/pressure',
          value: { $numberDouble: '1013.2' },
          time: { $date: '2025-06-15T14:25:00Z' },
        },
        { topic: 'esp/air/pressure', value: { $numberInt: '1013' }, time: { $date: '2025-06-15T14:26:00Z' } },
      ],
    });
    expect((await compare('/api/box/v1/action/insertMany', sized(ejson(), many), many)).status).to.equal(201);
    const find = '{"collection":"actions","database":"Website","dataSource":"Cluster0"}';
    const headers = { 'content-type': 'application/json', 'api-key': apiKey };
    const found = await compare('/api/box/v1/action/find', sized(headers, find), find);
    expect(found.status).to.equal(200);
    expect(found.body).to.include('pump_1');
    await compare('/api/box/v1/action/find', sized({ ...headers, 'x-request-id': 'box-7' }, find), find);
    // 6 inserts, 1 insertMany, 2 finds: each answered once by the lane.
    expect(laneAnswers(twin.laneMetrics, 'box') - before).to.equal(9);
    expect(requestLines(api.logger).slice(-9)).to.deep.equal(requestLines(twin.logger).slice(-9));
  });

  it('when a request is refused (key, collection, value, JSON, depth, action, size), then the lane answers the error as Koa does', async () => {
    const before = laneAnswers(twin.laneMetrics, 'box');
    const good = document('esp/air/temperature', '21.5', '2025-06-15T14:29:00Z');
    const refused: [string, Record<string, string>, string][] = [
      [insertPath, { ...ejson(), 'api-key': 'not-a-key' }, good],
      [insertPath, { 'content-type': 'application/ejson' }, good],
      [insertPath, ejson(), good.replace('"datas"', '"users"')],
      [insertPath, ejson(), document('esp/air/temperature', 'warm', '2025-06-15T14:29:00Z')],
      [insertPath, ejson(), document('esp/air/temperature', '21.5', 'yesterday')],
      [insertPath, ejson(), document('esp/air/temperature', '21.5', '2025-06-15T18:29:00Z')],
      [insertPath, ejson(), '{"collection":"datas","document":'],
      [insertPath, ejson(), '"datas"'],
      [insertPath, ejson(), ''],
      [insertPath, ejson(), `{"collection":"datas","document":${'['.repeat(40)}${']'.repeat(40)}}`],
      [insertPath, ejson(), '{"collection":"datas","document":{"__proto__":{"x":1}}}'],
      [insertPath, ejson(), '{"collection":"datas","document":{"topic":{"$where":"1"}}}'],
      [insertPath, ejson(), `\uFEFF${good}`],
      [insertPath, ejson(), '{"collection":"datas","documents":[]}'],
      ['/api/box/v1/action/deleteMany', ejson(), good],
      ['/api/box/v1/action/insertone', ejson(), good],
      ['/API/Box/V1/action/find', { 'content-type': 'application/json', 'api-key': apiKey }, '{}'],
    ];
    for (const [path, headers, body] of refused) await compare(path, sized(headers, body), body);
    expect(laneAnswers(twin.laneMetrics, 'box') - before).to.equal(refused.length);
  });

  it('when a $date is at the edge of the range, date-only, a year, or has an offset, then the lane answers as Koa does: 400 for the first three, the offset taken as it says', async () => {
    const edges: [unknown, number][] = [
      [{ $date: { $numberLong: '8640000000000000' } }, 400],
      [{ $date: '+275760-09-13T00:00:00.000Z' }, 400],
      [{ $date: '-271821-04-20T00:00:00.000Z' }, 400],
      [{ $date: '2026' }, 400],
      [{ $date: '2025-06-15' }, 400],
      [{ $date: '2025-06-15T17:27:00.000+05:00' }, 201],
    ];
    for (const [time, status] of edges) {
      const body = JSON.stringify({
        collection: 'datas',
        document: { topic: 'esp/air/humidity', value: '40.00', time },
      });
      const answer = await compare(insertPath, sized(ejson(), body), body);
      expect(answer.status, `${JSON.stringify(time)}: ${answer.body}`).to.equal(status);
    }
    const latest = (await api.get(`/api/data/latestdata/All?groupId=${group}`)).json() as {
      topic: string;
      time: string;
    }[];
    expect(latest.find(({ topic }) => topic === 'esp/air/humidity')?.time).to.equal(
      '2025-06-15T12:27:00.000Z',
    );
  });

  it('when a request is unusual (query, Origin, chunked, encoding, other type, oversized, cross-site), then Koa answers it and the answers still match', async () => {
    const before = laneAnswers(twin.laneMetrics, 'box');
    const good = document('esp/air/temperature', '21.6', '2025-06-15T14:28:00Z');
    const unusual: [string, Record<string, string>, string][] = [
      [`${insertPath}?x=1`, sized(ejson(), good), good],
      [insertPath, sized({ ...ejson(), origin: 'https://elsewhere.example' }, good), good],
      [insertPath, sized({ ...ejson(), 'sec-fetch-site': 'cross-site' }, good), good],
      [insertPath, { ...ejson(), 'transfer-encoding': 'chunked' }, good],
      [insertPath, sized({ ...ejson(), 'content-encoding': 'zstd' }, good), good],
      [insertPath, sized({ ...ejson(), 'content-type': 'text/plain' }, good), good],
      [insertPath, sized({ ...ejson(), 'content-type': 'application/json; charset=utf-8' }, good), good],
      [insertPath, sized(ejson(), ' '.repeat(70_000)), ' '.repeat(70_000)],
      [`${insertPath}/`, sized(ejson(), good), good],
      [insertPath, sized({ ...ejson(), host: 'evil.example' }, good), good],
    ];
    for (const [path, headers, body] of unusual) {
      await compare(path, headers, body);
      expect(laneAnswers(twin.laneMetrics, 'box') - before, `${path} ${JSON.stringify(headers)}`).to.equal(0);
    }
  });

  it('when access keys are in use, then box requests (with or without a credential of their own, in any case of path) are answered as Koa does', async () => {
    const key = await api.container
      .get(CreateAccessKey)
      .execute({ name: 'box-lane reader', kind: 'client', groups: [group] });
    // "Are keys in use" was answered before the first key existed: let the cached answer expire.
    api.clock.advance(60_000);
    const find = '{"collection":"actions"}';
    const headers = { 'content-type': 'application/json', 'api-key': apiKey };
    const cases: [string, Record<string, string>][] = [
      ['/api/box/v1/action/find', headers],
      ['/API/BOX/V1/ACTION/find', headers],
      ['/api/box/v1/action/find', { ...headers, authorization: `Bearer ${key.secret}` }],
      ['/api/box/v1/action/find', { ...headers, authorization: 'Bearer hk_not-a-key' }],
      ['/api/box/v1/action/find', { ...headers, cookie: 'hortus_session=nothing' }],
    ];
    for (const [path, sent] of cases) await compare(path, sized(sent, find), find);
  });

  it('when the lane and Koa both count, then the metrics of the box endpoint are the same', () => {
    const boxRoutes = /route="\/api\/box\//u;
    expect(requestSeries(twin.laneMetrics, boxRoutes)).to.not.deep.equal([]);
    expect(requestSeries(twin.laneMetrics, boxRoutes)).to.deep.equal(requestSeries(twin.metrics, boxRoutes));
  });

  it('when a box stops half-way through its body, then the lane answers 408 JSON at the body timeout and closes the connection, as Koa does', async () => {
    const slow = await startTestServer({ BODY_TIMEOUT_MS: '300' });
    try {
      const metrics = slow.container.get(HttpServer).metrics;
      const { port } = new URL(slow.url);
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
        socket.write(
          `POST ${insertPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/ejson\r\n` +
            `api-key: ${apiKey}\r\nContent-Length: 200\r\n\r\n{"collection":"datas",`,
        );
      });
      expect(text).to.match(/^HTTP\/1\.1 408 /u);
      expect(text).to.match(/connection: close/iu);
      expect(text).to.contain('{"message":"Request body was not received within 300 ms"}');
      expect(laneAnswers(metrics, 'box')).to.equal(1);
      expect(slow.logger.lines.filter(({ event }) => event === 'request body timed out')).to.have.length(1);
    } finally {
      await slow.close();
    }
  });
});
