import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The FerretDB test server that scripts/ferretdb.sh builds; tests that kill and restart a database use it. */
export const ferretDbBinary = fileURLToPath(
  new URL('../../../../tools/ferretdb/bin/ferretdb-test', import.meta.url),
);

/** A port nothing listens on right now, so a test server can be restarted on the same one. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(),
      );
    });
  });
}

/** Starts the FerretDB test binary on its own port and data directory; resolves once it listens. */
export async function startFerretDb(port: number, dir: string): Promise<ChildProcess> {
  const server = spawn(ferretDbBinary, ['-listen', `127.0.0.1:${port}`, '-dir', dir], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`test database exited with ${code}`)));
    server.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready ')) resolve();
    });
  });
  return server;
}

/** Kills a child process at once (a crash, not a shutdown) and waits until it is gone. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Whether something accepts TCP connections on 127.0.0.1:port (a broker, a database), within a second. */
export async function isListening(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const answer = (listening: boolean): void => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(1000);
    socket.once('connect', () => answer(true));
    socket.once('error', () => answer(false));
    socket.once('timeout', () => answer(false));
  });
}

export interface DeliveredMail {
  /** The envelope's sender and recipients. */
  readonly from: string;
  readonly to: readonly string[];
  /** The message as received (headers and body). */
  readonly data: string;
  /** The text body, with quoted-printable soft line breaks and `=3D` undone. */
  readonly body: string;
}

export interface SmtpTestServer {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  readonly url: string;
  readonly delivered: DeliveredMail[];
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (the smtp-server package) that keeps every message it is given. */
export async function startSmtpTestServer(): Promise<SmtpTestServer> {
  const { SMTPServer } = await import('smtp-server');
  const delivered: DeliveredMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const data = Buffer.concat(chunks).toString('utf8');
        const text = data.slice(data.indexOf('\r\n\r\n') + 4);
        delivered.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          data,
          body: text.replace(/=\r\n/gu, '').replace(/=3D/gu, '='),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `smtp://127.0.0.1:${port}`,
    delivered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The bcrypt cost of test servers and test containers: the lowest bcrypt allows, so a suite that signs up
 * and logs in hundreds of times does not spend minutes hashing on a loaded machine. Tests of the cost itself
 * (rehashing weaker hashes, the default of 12) name their cost.
 */
export const TEST_BCRYPT_COST = 4;

/**
 * A TCP relay on 127.0.0.1 to a local port (a broker, a database) that a test can cut and restore, to play
 * a server that goes away: close() cuts every relayed connection, open() takes new ones on the same port.
 * stall() plays a server that is connected but silent (stopped, swapping): what the server answers is held
 * until resume(), as a SIGSTOPped process's answers are.
 */
export class TcpRelay {
  port = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** Each relayed connection: answers flow from upstream to downstream unless stalled. */
  private readonly pairs = new Set<{ readonly upstream: Socket; readonly downstream: Socket }>();
  private stalled = false;

  constructor(private readonly upstreamPort: number) {}

  async open(): Promise<void> {
    const server = createServer((downstream) => {
      const upstream = connect(this.upstreamPort, '127.0.0.1');
      const pair = { upstream, downstream };
      this.pairs.add(pair);
      for (const socket of [downstream, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => {
          this.sockets.delete(socket);
          this.pairs.delete(pair);
        });
        socket.on('error', () => {
          downstream.destroy();
          upstream.destroy();
        });
      }
      downstream.pipe(upstream);
      if (this.stalled) upstream.pause();
      else upstream.pipe(downstream);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Holds every answer from upstream, on open connections and new ones, until resume(). */
  stall(): void {
    this.stalled = true;
    for (const { upstream, downstream } of this.pairs) {
      upstream.unpipe(downstream);
      upstream.pause();
    }
  }

  /** Lets the held answers through, and every later one. */
  resume(): void {
    this.stalled = false;
    for (const { upstream, downstream } of this.pairs) upstream.pipe(downstream);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
  }
}
