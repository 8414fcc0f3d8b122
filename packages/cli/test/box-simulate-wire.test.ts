import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { expect } from 'chai';
import { loadCertificate } from '../src/app/tls.js';
import { berlinStampOf } from '../src/commands/box.js';
import { requestHead } from '../src/commands/box-wire.js';
import { hortus, scratchDataDir } from './harness.js';

/**
 * The simulator's bytes against what firmware 1.0.4 sends, written out here from COMPAT "Boxes" (the
 * wire, onboarding, readings, actions, updates) rather than from the simulator's code: a backend and a
 * data endpoint of the test's own record every request as it arrives.
 */

interface Captured {
  readonly connection: number;
  readonly text: string;
  readonly tls?: {
    protocol: string | null;
    servername: string | false | null;
    alpn: string | false | null;
    reused: boolean;
  };
}

type Answer = (head: string) => string | Promise<string>;

const reply = (status: string, body = ''): string =>
  `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** Records each request (head and Content-Length body) on its connection, and answers it. */
function recorder(captured: Captured[], answer: Answer): (socket: Socket) => void {
  let connections = 0;
  return (socket) => {
    const connection = (connections += 1);
    let bytes = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      const headEnd = bytes.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = bytes.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\nContent-Length: (\d+)/iu.exec(head)?.[1] ?? 0);
      if (bytes.length < headEnd + 4 + length) return;
      const tls =
        'getProtocol' in socket
          ? {
              protocol: (socket as TLSSocket).getProtocol(),
              servername: (socket as TLSSocket).servername,
              alpn: (socket as TLSSocket).alpnProtocol,
              reused: (socket as TLSSocket).isSessionReused(),
            }
          : undefined;
      captured.push({ connection, text: bytes.toString('utf8'), ...(tls === undefined ? {} : { tls }) });
      void Promise.resolve(answer(head)).then((text) => socket.end(text));
    });
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Resolves once the wall clock's second has moved on from `instant`'s. */
async function nextSecondAfter(instant: number): Promise<void> {
  while (Math.floor(Date.now() / 1000) === Math.floor(instant / 1000)) {
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
  }
}

/** What the firmware's HTTP client writes, COMPAT "Boxes" 6: its four headers, the request's, then length. */
function firmwareRequest(
  method: string,
  path: string,
  host: string,
  own: readonly string[],
  body = '',
): string {
  const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  return (
    `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: ESP32HTTPClient\r\nConnection: keep-alive\r\n` +
    `Accept-Encoding: identity;q=1,chunked;q=0.1,*;q=0\r\n${own.map((line) => `${line}\r\n`).join('')}${length}\r\n${body}`
  );
}

const TOPICS = [
  'esp/air/temperature',
  'esp/air/humidity',
  'esp/air/pressure',
  'esp/air/gasResistance',
  'esp/ground/moisture/1',
  'esp/ground/moisture/2',
  'esp/ground/light/colorTemp',
  'esp/ground/light/lux',
  'esp/ground/light/red',
  'esp/ground/light/green',
  'esp/ground/light/blue',
  'esp/ground/light/clear',
];
const DATA_URL = '/app/data-test/endpoint/data/v1';
const API_KEY = 'k3y-0f-the-box';
// A quote and a non-ASCII letter: pasted unescaped, and counted in bytes by Content-Length.
const GROUP = 'Süd "A"';

describe('hortus box simulate on the wire: the bytes of firmware 1.0.4', function () {
  this.timeout(30_000);
  let certificate: { cert: string | Buffer; key: string | Buffer };
  const servers: Server[] = [];
  before(async () => {
    certificate = await loadCertificate({ mode: 'self-signed' }, scratchDataDir());
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(close));
  });

  /** A backend (plain HTTP) that onboards the box to `dataPort`, and answers the update check with 204. */
  async function backend(captured: Captured[], dataPort: number): Promise<number> {
    const onboarding = JSON.stringify({
      group: GROUP,
      host: `127.0.0.1:${dataPort}`,
      url: DATA_URL,
      apiKey: API_KEY,
    });
    const server = createTcpServer(
      recorder(captured, (head) =>
        head.startsWith('GET /api/hardware/update ') ? reply('204 No Content') : reply('200 OK', onboarding),
      ),
    );
    servers.push(server);
    return listen(server);
  }

  it('when it runs one round, then it sends what the firmware sends, in its order, on TLS 1.2 with the IP address as SNI', async () => {
    const captured: Captured[] = [];
    let firstReadingAt: number | undefined;
    const data = createTlsServer(
      { ...certificate, minVersion: 'TLSv1.2' },
      recorder(captured, async (head) => {
        if (head.includes('/action/find ')) {
          return reply(
            '200 OK',
            '{"documents":[{"object":"pump_1","value":"on"},{"object":"led_1","value":"off"}]}',
          );
        }
        // The first reading's answer waits for the next second: the readings after it must be stamped later.
        if (firstReadingAt === undefined) {
          firstReadingAt = Date.now();
          await nextSecondAfter(firstReadingAt);
        }
        return reply('201 Created', '{"insertedId":"x"}');
      }),
    );
    servers.push(data);
    const dataPort = await listen(data);
    const backendPort = await backend(captured, dataPort);
    const before = Date.now();

    const { code, stdout, stderr } = await hortus(undefined, [
      'box',
      'simulate',
      '--backend',
      `http://127.0.0.1:${backendPort}`,
      '--device',
      '24:6F:28:AA:00:01',
      '--count',
      '1',
      '--nan',
      'esp/air/humidity',
    ]);

    const after = Date.now();
    expect(code, stdout + stderr).to.equal(0);
    expect(stderr).to.equal('');
    expect(stdout).to.contain('update check: 204, nothing offered');
    expect(stdout).to.contain(
      'round 1: actions 200, would switch: pump_1 on, led_1 off, ventilator_1 off, ventilator_2 off',
    );
    expect(stdout).to.match(/round 1: readings 12 x 201, box time \S+ to \S+, over TLSv1\.2/u);
    // Onboarding, the update check, the actions, then one reading per sensor: 15 requests, each on its own connection.
    expect(captured.map(({ text }) => text.slice(0, text.indexOf(' HTTP/1.1')))).to.deep.equal([
      'GET /api/hardware',
      'GET /api/hardware/update',
      `POST ${DATA_URL}/action/find`,
      ...TOPICS.map(() => `POST ${DATA_URL}/action/insertOne`),
    ]);
    const [onboarding, update, find, ...readings] = captured;
    expect(
      new Set(captured.map(({ connection, tls }) => `${tls === undefined}:${connection}`)).size,
    ).to.equal(15);

    const lastactive = /\r\nlastactive: (\d+)\r\n/u.exec(onboarding!.text)?.[1];
    expect(lastactive, onboarding!.text).to.match(/^\d+$/u);
    expect(onboarding!.text).to.equal(
      firmwareRequest('GET', '/api/hardware', `127.0.0.1:${backendPort}`, [
        'Content-Type: application/json',
        'deviceId: 100aa286f24',
        'updateVersion: 1.0.4',
        `lastactive: ${lastactive}`,
      ]),
    );
    expect(update!.text).to.equal(
      firmwareRequest('GET', '/api/hardware/update', `127.0.0.1:${backendPort}`, []),
    );
    const dataHost = `127.0.0.1:${dataPort}`;
    expect(find!.text).to.equal(
      firmwareRequest(
        'POST',
        `${DATA_URL}/action/find`,
        dataHost,
        ['Content-Type: application/json', 'Access-Control-Request-Headers: *', `api-key: ${API_KEY}`],
        '{"collection":"actions","database":"Website","dataSource":"Cluster0"}',
      ),
    );
    const stamps: string[] = [];
    for (const [index, reading] of readings.entries()) {
      const value = /"value":"([^"]*)"/u.exec(reading.text)?.[1] ?? '';
      const stamp = /"\$date":"([^"]*)"/u.exec(reading.text)?.[1] ?? '';
      expect(value, TOPICS[index]).to.match(TOPICS[index] === 'esp/air/humidity' ? /^nan$/u : /^\d+\.\d\d$/u);
      expect(stamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/u);
      stamps.push(stamp);
      expect(reading.text).to.equal(
        firmwareRequest(
          'POST',
          `${DATA_URL}/action/insertOne`,
          dataHost,
          ['Content-Type: application/ejson', 'Accept: application/json', `api-key: ${API_KEY}`],
          `{"collection":"datas","database":"Website","dataSource":"Cluster0","document":{"topic":"${TOPICS[index]}",` +
            `"group":"${GROUP}","value":"${value}","time":{"$date":"${stamp}"}}}`,
        ),
      );
    }
    // Berlin wall-clock time labelled UTC, taken per reading: the ones after the slow answer are later.
    expect(stamps[0]! >= berlinStampOf(new Date(Math.floor(before / 1000) * 1000))).to.equal(true);
    expect(stamps.at(-1)! <= berlinStampOf(new Date(after))).to.equal(true);
    expect(stamps[1]! > stamps[0]!, stamps.join(' ')).to.equal(true);
    expect([...stamps].sort()).to.deep.equal(stamps);
    for (const request of [find, ...readings]) {
      expect(request?.tls).to.deep.equal({
        protocol: 'TLSv1.2',
        servername: '127.0.0.1',
        alpn: false,
        reused: false,
      });
    }
  });

  it('when the backend is an IPv6 address, then Host keeps its brackets, with the port unless it is 80 or 443', () => {
    const head = (url: string): string | undefined =>
      requestHead({ method: 'GET', url, headers: [] }).split('\r\n')[1];
    expect(head('http://[::1]:8080/action/find')).to.equal('Host: [::1]:8080');
    expect(head('https://[2001:db8::7]/x')).to.equal('Host: [2001:db8::7]');
    expect(head('http://192.0.2.7:8080/x')).to.equal('Host: 192.0.2.7:8080');
  });

  it('when the data endpoint speaks TLS 1.3 only, then every request of the round fails, as on a box, and it exits 1', async () => {
    const captured: Captured[] = [];
    const refused: string[] = [];
    const data = createTlsServer(
      { ...certificate, minVersion: 'TLSv1.3' },
      recorder(captured, () => reply('201 Created', '{}')),
    );
    data.on('tlsClientError', (error: NodeJS.ErrnoException) => refused.push(error.code ?? error.message));
    servers.push(data);
    const backendPort = await backend([], await listen(data));

    const { code, stdout } = await hortus(undefined, [
      'box',
      'simulate',
      '--backend',
      `http://127.0.0.1:${backendPort}`,
      '--device',
      '246f28aa0001',
      '--count',
      '1',
    ]);

    expect(code, stdout).to.equal(1);
    expect(stdout).to.match(/round 1: actions no answer \(ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION/u);
    expect(stdout).to.contain('round 1: readings 12 x no answer');
    expect(captured).to.deep.equal([]);
    expect(refused).to.have.length(13);
  });
});
