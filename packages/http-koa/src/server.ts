import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { type AddressInfo, type Server as NetServer } from 'node:net';
import { type Duplex } from 'node:stream';
import { LOGGER, type Logger, STORE_LIFECYCLE, type StoreLifecycle } from '@hortus/core';
import { inject, injectable, optional } from 'inversify';
import { AccessControl } from './access/access.js';
import { createApp } from './app.js';
import { trustedProxy } from './edge/client-address.js';
import { shareConnectionsByAddress } from './edge/connections.js';
import { type HttpSettings } from './config.js';
import { type SharedRateLimit } from './edge/rate-limit.js';
import { ClientFaultLog } from './logger.js';
import { HTTP_METRICS, type HttpMetrics } from './edge/metrics.js';
import { type HttpUseCases } from './routes/routing.js';

export const HTTP_SETTINGS = Symbol.for('hortus.http.Settings');
export const HTTP_USE_CASES = Symbol.for('hortus.http.UseCases');
/** The request limit shared by every server (RATE_LIMIT_REDIS_URL), bound by the composition root when set. */
export const SHARED_RATE_LIMIT = Symbol.for('hortus.http.SharedRateLimit');

const NOT_DEGRADED = { degraded: false, fallbacks: { deadline: 0, unavailable: 0 } } as const;

/** The Koa application on a Node HTTP server: listens, and drains its requests when closed. */
@injectable()
export class HttpServer {
  readonly server: Server;
  /** The request listener (the poll lane, then Koa): an HTTPS listener serves the same application. */
  readonly handle: RequestListener;
  /** Where warnings about what clients send go, rate-limited; shared with an HTTPS listener. */
  readonly clientFaults: ClientFaultLog;
  /** Where onboarding sends boxes: read by the onboarding route at each request. */
  private readonly boxes: { httpsPort: number; publicHost?: string };

  constructor(
    @inject(HTTP_USE_CASES) useCases: HttpUseCases,
    @inject(HTTP_SETTINGS) private readonly settings: HttpSettings,
    @inject(LOGGER) logger: Logger,
    @inject(AccessControl) access: AccessControl,
    @inject(HTTP_METRICS) readonly metrics: HttpMetrics,
    @inject(STORE_LIFECYCLE) store: StoreLifecycle,
    @inject(SHARED_RATE_LIMIT) @optional() sharedRateLimit?: SharedRateLimit,
  ) {
    const clientFaults = new ClientFaultLog(logger);
    this.clientFaults = clientFaults;
    this.boxes = {
      httpsPort: settings.httpsPort,
      ...(settings.boxPublicHost === undefined ? {} : { publicHost: settings.boxPublicHost }),
    };
    const app = createApp(useCases, {
      logger,
      clientFaults,
      allowedHosts: settings.allowedHosts,
      bodyTimeoutMs: settings.bodyTimeoutMs,
      corsOrigins: settings.corsOrigins,
      bodyLimitBytes: settings.bodyLimitBytes,
      ingestBodyLimitBytes: settings.ingestBodyLimitBytes,
      access,
      metrics,
      ready: () => store.ping(),
      rateLimitPerMinute: settings.rateLimitPerMinute,
      ...(sharedRateLimit === undefined ? {} : { sharedRateLimit }),
      trustProxy: settings.trustProxy,
      pollLane: settings.pollLane,
      answerBuilds: settings.answerBuilds,
      logRequests: settings.logRequests,
      boxes: this.boxes,
      ...(settings.client === undefined ? {} : { client: settings.client }),
      ...(settings.console === undefined ? {} : { console: settings.console }),
    });
    this.handle = app.handle;
    if (sharedRateLimit?.health !== undefined) {
      metrics.watchSharedRateLimit(() => sharedRateLimit.health?.() ?? NOT_DEGRADED);
    }
    this.server = createServer(serverLimits(settings), app.handle);
    guardConnections(this.server, settings, clientFaults);
  }

  /** The port the HTTPS listener got (HTTPS_PORT=0 takes a free one): onboarding sends boxes there. */
  useHttpsPort(port: number): void {
    this.boxes.httpsPort = port;
  }

  /** Listens on the configured port and host; resolves with the URL, e.g. http://127.0.0.1:8080. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.settings.port, this.settings.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return urlOf(this.server.address() as AddressInfo);
  }

  /** Stops accepting and lets in-flight requests finish; after `graceMs` the rest are cut. */
  async close(graceMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Idle keep-alive connections would hold close() open; busy ones finish their request first.
    this.server.closeIdleConnections();
    const grace = setTimeout(() => this.server.closeAllConnections(), graceMs);
    try {
      await closed;
    } finally {
      clearTimeout(grace);
    }
  }
}

/**
 * Node's own timeouts as the backstop of the app's: the request line and headers within
 * `headersTimeoutMs`, the whole request within the body timeout after that (the app answers a slow body
 * 408 first, in JSON). They are checked every second rather than Node's default 30 s.
 */
export function serverLimits(
  settings: Pick<HttpSettings, 'headersTimeoutMs' | 'bodyTimeoutMs'>,
): ServerOptions {
  return {
    headersTimeout: settings.headersTimeoutMs,
    requestTimeout: settings.headersTimeoutMs + settings.bodyTimeoutMs + 1000,
    connectionsCheckingInterval: Math.min(1000, settings.headersTimeoutMs),
  };
}

/**
 * The connection rules of every listener, plain or TLS: MAX_CONNECTIONS, each address's share of it, and a
 * short answer to bytes that are not HTTP. `speaksHttp` says whether a connection has got as far as HTTP
 * (on a TLS listener: whether its handshake finished); one that has not is closed without an answer.
 */
export function guardConnections(
  server: NetServer,
  settings: Pick<HttpSettings, 'maxConnections' | 'maxConnectionsPerAddress' | 'trustProxy'>,
  clientFaults: ClientFaultLog,
  speaksHttp: (socket: Duplex) => boolean = () => true,
): void {
  server.maxConnections = settings.maxConnections;
  shareConnectionsByAddress(server, settings.maxConnectionsPerAddress, trustedProxy(settings.trustProxy));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A TLS error before the handshake (a timeout, a scanner): HTTP bytes would be written into a TLS
    // stream that never began, and the end they wait for never comes, so the socket held its slot for good.
    if (!speaksHttp(socket)) socket.destroy();
    else answerClientError(error, socket, clientFaults);
  });
}

/** How long a connection answered a client error may take to receive that answer before it is cut. */
const CLIENT_ERROR_LINGER_MS = 2000;

const clientErrorAnswers: Readonly<Record<string, string>> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
};

/**
 * Bytes that are not HTTP, headers too large or too slow: the client's fault, so a rate-limited warning
 * (never an error line anyone could flood the log with) and a status line where the socket allows.
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  faults: ClientFaultLog,
): void {
  const code = error.code ?? 'unknown';
  // A browser opens connections ahead of need and may never send on them: an idle connection timing out
  // is no malformed request, and nobody waits for an answer on it.
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' && (socket as Duplex & { bytesRead?: number }).bytesRead === 0) {
    socket.destroy();
    return;
  }
  if (code !== 'ECONNRESET') faults.warn('malformed request', { code, error: error.message });
  // Node's own test: an answer already under way on this connection cannot be followed by another.
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && answering !== true) {
    const status = clientErrorAnswers[code] ?? '400 Bad Request';
    // No body: the request (perhaps a HEAD) could not be read, so nothing says a body may follow.
    socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    // The connection ends once the answer is out, whether or not the client closes its side; a client
    // that does not read it does not keep the connection either.
    const cut = setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
    socket.once('finish', () => {
      clearTimeout(cut);
      socket.destroy();
    });
  } else {
    socket.destroy();
  }
}

export function urlOf(address: AddressInfo, scheme: 'http' | 'https' = 'http'): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  const host = wildcard ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}
