import { connect, createServer, type Server, type Socket } from 'node:net';
import { expect } from './harness.js';
import { type ServedProcess, spawnServe, describeOncePerRun } from './served-process.js';

/*
 * Issue 33, item 11: SIGTERM ends `hortus serve` whatever is stuck. The stop deadline is 15 s (the
 * requests' 10 s grace and 5 s for the bridge and the store); a probe saw a server still running 45 s after
 * SIGTERM, and one whose shutdown promise never settled (Node's exit 13, "unsettled top-level await").
 */

const STOP_DEADLINE_MS = 15_000;

/** A TCP server that accepts connections and never says a word: a frozen Redis, MongoDB or broker. */
async function silentServer(): Promise<Silent> {
  const held: Socket[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    held.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, port, accepted: () => held.length, held };
}

interface Silent {
  readonly server: Server;
  readonly port: number;
  readonly held: Socket[];
  accepted(): number;
}

async function closeSilent(silent: Silent): Promise<void> {
  for (const socket of silent.held) socket.destroy();
  await new Promise<void>((resolve) => silent.server.close(() => resolve()));
}

async function until(check: () => boolean, waitMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > waitMs) throw new Error(`not within ${waitMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function expectEnded(served: ServedProcess, exit: { code: number | null; afterMs: number }): void {
  expect(exit.afterMs, served.output()).to.be.below(STOP_DEADLINE_MS + 5000);
  // 0: a clean stop; 1: the deadline cut it; 5: a start that found the store away. Never Node's 13 (the
  // stop's promise left unsettled) nor a kill.
  expect(exit.code, served.output()).to.be.a('number').and.not.equal(13);
  expect(served.output()).not.to.include('unsettled top-level await');
}

describeOncePerRun('hortus serve: SIGTERM ends the process whatever is stuck', function () {
  this.timeout(90_000);
  const started: ServedProcess[] = [];
  const silents: Silent[] = [];
  afterEach(async () => {
    for (const served of started.splice(0)) await served.cleanUp();
    for (const silent of silents.splice(0)) await closeSilent(silent);
  });

  it('when idle TCP connections hold the HTTPS listener, then SIGTERM ends the process within the deadline', async () => {
    const served = await spawnServe({
      TLS: 'self-signed',
      HTTPS_PORT: '0',
      TLS_HANDSHAKE_TIMEOUT_MS: '120000',
    });
    started.push(served);
    const port = Number(new URL(served.httpsUrl ?? '').port);
    const sockets = Array.from({ length: 5 }, () =>
      connect({ host: '127.0.0.1', port }).on('error', () => undefined),
    );
    await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
    try {
      expectEnded(served, await served.stop('SIGTERM'));
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('when the MQTT broker accepts and never answers, then SIGTERM ends the process within the deadline', async () => {
    const broker = await silentServer();
    silents.push(broker);
    const served = await spawnServe({ MQTT_URL: `mqtt://127.0.0.1:${broker.port}` });
    started.push(served);
    await until(() => broker.accepted() > 0, 10_000, 'the bridge connects to the broker');
    expectEnded(served, await served.stop('SIGTERM'));
  });

  it('when Redis (RATE_LIMIT_REDIS_URL) accepts and never answers, then SIGTERM ends the process within the deadline', async () => {
    const redis = await silentServer();
    silents.push(redis);
    const served = await spawnServe(
      { RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${redis.port}`, RATE_LIMIT_PER_MINUTE: '600' },
      { listening: false },
    );
    started.push(served);
    await until(() => redis.accepted() > 0, 10_000, 'the server connects to Redis');
    expectEnded(served, await served.stop('SIGTERM'));
  });

  it('when the MongoDB store accepts and never answers, then SIGTERM ends the process within the deadline', async () => {
    const mongo = await silentServer();
    silents.push(mongo);
    const served = await spawnServe(
      { STORE: '', MONGODB_URI: `mongodb://127.0.0.1:${mongo.port}/hortus_silent` },
      { listening: false },
    );
    started.push(served);
    await until(() => mongo.accepted() > 0, 10_000, 'the server connects to MongoDB');
    expectEnded(served, await served.stop('SIGTERM'));
  });
});
