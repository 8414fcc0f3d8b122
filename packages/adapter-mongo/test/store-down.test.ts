import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { MongoStore } from '@hortus/adapter-mongo';
import { storeDownContract } from '@hortus/contract-tests';
import { TcpRelay } from '@hortus/test-support';
import { mongoUri, serverSuite } from './fixture.js';

/** The port of the test server in MONGODB_URI (one host, as FerretDB's and a local mongod's are). */
function upstreamPort(uri: string): number {
  const port = /^mongodb:\/\/(?:[^@/]*@)?[^:/,]+:(\d+)/u.exec(uri)?.[1];
  if (port === undefined) throw new Error(`MONGODB_URI needs one host with a port for this suite: ${uri}`);
  return Number(port);
}

/** A server on `port` that accepts connections and never answers: a database that stopped answering. */
async function silentServer(port: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// Production's deadline (MONGODB_TIMEOUT_MS's default): generous enough for a loaded test machine's start.
const OPERATION_TIMEOUT_MS = 2000;

describe(serverSuite('Mongo adapter against the "store is down" suite'), function () {
  before(function () {
    if (mongoUri === undefined) this.skip();
  });

  // The store reaches the test server through a relay; "down" cuts the relay and puts a server on its port
  // that accepts and keeps silent, the harshest outage: connections that open and never answer.
  storeDownContract(
    'Mongo',
    async () => {
      const uri = mongoUri ?? '';
      const relay = new TcpRelay(upstreamPort(uri));
      await relay.open();
      const dbName = `hortus_down_${randomBytes(6).toString('hex')}`;
      const store = MongoStore.fromSettings({
        uri: `mongodb://127.0.0.1:${relay.port}/?directConnection=true`,
        dbName,
        operationTimeoutMS: OPERATION_TIMEOUT_MS,
      });
      await store.start();
      let silent: { close(): Promise<void> } | undefined;
      return {
        repositories: store.repositories(),
        stop: async () => {
          await relay.close();
          silent = await silentServer(relay.port);
        },
        dispose: async () => {
          await silent?.close();
          await relay.close();
          await store.close();
          // The database the store created (its indexes) goes with a client of its own, straight to the server.
          const cleaner = MongoStore.fromSettings({ uri, dbName });
          try {
            await cleaner.db.dropDatabase();
          } finally {
            await cleaner.close();
          }
        },
      };
    },
    // The adapter's longest deadline (a firmware image is read and written with four times the deadline
    // of one small operation: it is megabytes), and room for a loaded test machine.
    { withinMs: 4 * OPERATION_TIMEOUT_MS + 2000 },
  );
});
