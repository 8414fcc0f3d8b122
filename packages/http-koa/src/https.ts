import { type RequestListener } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, type Socket } from 'node:net';
import { type Duplex } from 'node:stream';
import { createSecureContext } from 'node:tls';
import { type HttpSettings, type TlsMaterial } from './config.js';
import { type ClientFaultLog } from './logger.js';
import { guardConnections, serverLimits, urlOf } from './server.js';

/**
 * The same application over HTTPS: the request listener of the plain server (the poll lane in front of Koa)
 * on a Node HTTPS server with the same limits. Its certificate can be replaced while it runs: connections
 * already open keep the one they began with, new ones get the new one.
 */
export class HttpsListener {
  readonly server: Server;
  /** Every TCP connection open, handshaken or not. */
  private readonly sockets = new Set<Socket>();

  constructor(
    handle: RequestListener,
    settings: Pick<
      HttpSettings,
      | 'headersTimeoutMs'
      | 'bodyTimeoutMs'
      | 'tlsHandshakeTimeoutMs'
      | 'maxConnections'
      | 'maxConnectionsPerAddress'
      | 'trustProxy'
    >,
    material: TlsMaterial,
    clientFaults: ClientFaultLog,
  ) {
    this.server = createServer(
      {
        ...serverLimits(settings),
        ...keyPair(material),
        // The header deadline starts only once the handshake is done: until then this one applies.
        handshakeTimeout: settings.tlsHandshakeTimeoutMs,
      },
      handle,
    );
    const handshaken = new WeakSet<Duplex>();
    this.server.on('secureConnection', (socket: Duplex) => handshaken.add(socket));
    // Node's closeAllConnections knows only connections that got as far as HTTP; close() cuts the rest.
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    guardConnections(this.server, settings, clientFaults, (socket) => handshaken.has(socket));
    // A failed handshake (a scanner, a client that refuses the certificate) is the client's business.
    this.server.on('tlsClientError', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET')
        clientFaults.warn('TLS handshake failed', { code: error.code ?? 'unknown', error: error.message });
    });
  }

  /** Listens on `port` of `host`; resolves with the URL, e.g. https://127.0.0.1:8443. */
  async listen(port: number, host: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return urlOf(this.server.address() as AddressInfo, 'https');
  }

  /**
   * Uses a new certificate for new connections. A key that does not match, or text that is no PEM, throws
   * and the certificate in use stays.
   */
  replaceCertificate(material: TlsMaterial): void {
    const pair = keyPair(material);
    // Built first on its own: setSecureContext would otherwise fail halfway on a key that does not fit.
    createSecureContext(pair);
    this.server.setSecureContext(pair);
  }

  /** Stops accepting and lets in-flight requests finish; after `graceMs` the rest are cut. */
  async close(graceMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const grace = setTimeout(() => {
      this.server.closeAllConnections();
      for (const socket of this.sockets) socket.destroy();
    }, graceMs);
    try {
      await closed;
    } finally {
      clearTimeout(grace);
    }
  }
}

function keyPair(material: TlsMaterial): TlsMaterial {
  return { cert: material.cert, key: material.key };
}
