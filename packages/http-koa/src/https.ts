import { type RequestListener } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';
import { type Duplex } from 'node:stream';
import { createSecureContext } from 'node:tls';
import { ConfigError, type Env, envReader } from '@hortus/core';
import { type HttpSettings } from './config.js';
import { trustedProxy } from './edge/client-address.js';
import { shareConnectionsByAddress } from './edge/connections.js';
import { type ClientFaultLog } from './logger.js';
import { answerClientError, serverLimits, urlOf } from './server.js';

/**
 * TLS in Hortus itself: `off`; `files`, a certificate and key the operator keeps (TLS_CERT_FILE,
 * TLS_KEY_FILE); `self-signed`, one Hortus creates once in its data directory (TLS=self-signed).
 */
export type TlsSettings =
  | { readonly mode: 'off' }
  | { readonly mode: 'files'; readonly port: number; readonly certFile: string; readonly keyFile: string }
  | { readonly mode: 'self-signed'; readonly port: number };

export const tlsDefaults = { HTTPS_PORT: '8443', TLS: 'off' } as const;

/** Reads TLS, TLS_CERT_FILE, TLS_KEY_FILE and HTTPS_PORT; every bad combination is reported at once. */
export function tlsSettingsFromEnv(env: Env): TlsSettings {
  const problems: string[] = [];
  const { read, optional, integer } = envReader(env, tlsDefaults, problems);
  const port = integer('HTTPS_PORT', 0, 65535);
  const mode = read('TLS').toLowerCase();
  const certFile = optional('TLS_CERT_FILE');
  const keyFile = optional('TLS_KEY_FILE');
  const files = certFile !== undefined || keyFile !== undefined;
  if (mode !== 'off' && mode !== 'self-signed')
    problems.push(`TLS must be off or self-signed, got "${read('TLS')}"`);
  if (files && (certFile === undefined || keyFile === undefined))
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  if (files && mode === 'self-signed')
    problems.push('TLS=self-signed and TLS_CERT_FILE/TLS_KEY_FILE exclude each other: choose one');
  if (problems.length > 0) throw new ConfigError(problems);
  if (certFile !== undefined && keyFile !== undefined) return { mode: 'files', port, certFile, keyFile };
  return mode === 'self-signed' ? { mode: 'self-signed', port } : { mode: 'off' };
}

/** A certificate chain and its private key, PEM-encoded. */
export interface TlsMaterial {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/**
 * The same application over HTTPS: the request listener of the plain server (the poll lane in front of Koa)
 * on a Node HTTPS server with the same limits. Its certificate can be replaced while it runs: connections
 * already open keep the one they began with, new ones get the new one.
 */
export class HttpsListener {
  readonly server: Server;

  constructor(
    handle: RequestListener,
    settings: Pick<
      HttpSettings,
      'headersTimeoutMs' | 'bodyTimeoutMs' | 'maxConnections' | 'maxConnectionsPerAddress' | 'trustProxy'
    >,
    material: TlsMaterial,
    clientFaults: ClientFaultLog,
  ) {
    this.server = createServer({ ...serverLimits(settings), ...keyPair(material) }, handle);
    this.server.maxConnections = settings.maxConnections;
    shareConnectionsByAddress(
      this.server,
      settings.maxConnectionsPerAddress,
      trustedProxy(settings.trustProxy),
    );
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
      answerClientError(error, socket, clientFaults),
    );
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
    const grace = setTimeout(() => this.server.closeAllConnections(), graceMs);
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
