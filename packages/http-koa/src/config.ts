import { isIP } from 'node:net';
import { hostname } from 'node:os';
import {
  type CodeHostConfig,
  ConfigError,
  type Env,
  envReader,
  MAX_CODE_HOST_TIMEOUT_MS,
} from '@hortus/core';
import { checkClientDir, clientCsp, type ClientSettings } from './edge/client.js';
import { type ConsoleSettings } from './edge/console.js';

/** auto: access keys are required once the store holds one; on: always required; off: never. */
export const authModes = ['auto', 'on', 'off'] as const;
export type AuthMode = (typeof authModes)[number];

/**
 * Which proxies are trusted to say who the client is. `hops`: that many proxies stand in front, each
 * appending the address it saw to X-Forwarded-For, so the client is the entry `hops` from the right (0:
 * the header is ignored). `proxies`: the addresses or CIDR ranges of the proxies; the client is the
 * rightmost address of the chain (socket address, then X-Forwarded-For from right to left) that is not one
 * of them. Entries left of it were written by the client and are never believed.
 */
export type TrustProxy = { readonly hops: number } | { readonly proxies: readonly string[] };

/** What the HTTP transport needs to listen and to guard its routes. */
export interface HttpSettings {
  readonly port: number;
  readonly host: string;
  /** Exact origins (scheme://host[:port]) allowed to call with credentials. */
  readonly corsOrigins: readonly string[];
  readonly codeHost: CodeHostConfig;
  readonly bodyLimitBytes: number;
  /** Body limit of POST /api/data/readings, which carries batches of up to 5000 readings. */
  readonly ingestBodyLimitBytes: number;
  /** Requests per minute one client (IP address) may make; 0 turns the limit off. */
  readonly rateLimitPerMinute: number;
  /**
   * RATE_LIMIT_REDIS_URL: the request limit counted in this Redis for every server of the installation,
   * instead of in each process (see edge/shared-rate-limit.ts); unset: per process.
   */
  readonly rateLimitRedisUrl?: string;
  /** Behind reverse proxies: how the client address is taken from X-Forwarded-For. */
  readonly trustProxy: TrustProxy;
  /**
   * Host names (lower case; `*.example.org` for its subdomains) a request's Host may name, against DNS
   * rebinding. IP addresses are always allowed. `['*']`: any host.
   */
  readonly allowedHosts: readonly string[];
  /** How long a request body may take to arrive before the request is answered 408 and closed. */
  readonly bodyTimeoutMs: number;
  /** How long a client may take to send the request line and headers. */
  readonly headersTimeoutMs: number;
  /**
   * TLS_HANDSHAKE_TIMEOUT_MS: how long a connection to the HTTPS listener may take to finish its TLS
   * handshake; then it is closed without a word (the header deadline starts only after the handshake).
   */
  readonly tlsHandshakeTimeoutMs: number;
  /** Open connections at most; further ones are closed at once. */
  readonly maxConnections: number;
  /** How many of them one client address may hold (trusted proxies excepted). */
  readonly maxConnectionsPerAddress: number;
  readonly auth: AuthMode;
  /** How long the answers to "are keys in use" and "whose key is this" are reused. */
  readonly authCacheMs: number;
  /** POLL_LANE: polls answered in front of Koa (the default), or `off` to send every request through Koa. */
  readonly pollLane: boolean;
  /** ANSWER_WAIT_MS and MAX_ANSWER_BUILDS: how cacheable answers slow to build are bounded (BuildBounds). */
  readonly answerBuilds: { readonly waitMs: number; readonly maxBuilds: number };
  /** LOG_REQUESTS: a log line per request (the default), or `off` to keep only what goes wrong. */
  readonly logRequests: boolean;
  /** HTTPS_PORT: where HTTPS is served; onboarding sends boxes there unless BOX_PUBLIC_HOST says otherwise. */
  readonly httpsPort: number;
  /** BOX_PUBLIC_HOST: the host[:port] boxes are told to post to over HTTPS. */
  readonly boxPublicHost?: string;
  /** CLIENT_DIR (or `serve --client`): a web client's single-page build served under `/`, and its CSP. */
  readonly client?: ClientSettings;
  /** The console's build, served under /console/; the composition root finds it (packages/console). */
  readonly console?: ConsoleSettings;
}

export const httpDefaults = {
  PORT: '8080',
  // Loopback until the operator opens it (HOST=0.0.0.0): an open API must not reach the network by default.
  HOST: '127.0.0.1',
  CORS_ORIGINS: 'http://localhost:3000',
  CODE_HOST_API_URL: 'https://api.github.com',
  CODE_HOST_TIMEOUT_MS: String(MAX_CODE_HOST_TIMEOUT_MS),
  BODY_LIMIT_BYTES: String(1024 * 1024),
  // A 5000-reading batch is about 0.55 MB with usual names and 2.1 MB pretty-printed with the longest
  // names allowed (group 100, topic 200 characters): 4 MiB leaves room for whitespace and extra fields.
  INGEST_BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
  // Ten requests a second per client: a polling web client makes about one, a burst of 600 passes.
  RATE_LIMIT_PER_MINUTE: '600',
  TRUST_PROXY: 'off',
  // Filled in from this machine's names when unset: see defaultAllowedHosts.
  ALLOWED_HOSTS: '',
  BODY_TIMEOUT_MS: '30000',
  HEADERS_TIMEOUT_MS: '10000',
  // Node's own default is 120 s: long enough for idle sockets to hold every connection slot.
  TLS_HANDSHAKE_TIMEOUT_MS: '10000',
  MAX_CONNECTIONS: '1024',
  // Empty: a quarter of MAX_CONNECTIONS, so one client cannot hold them all.
  MAX_CONNECTIONS_PER_ADDRESS: '',
  AUTH: 'auto',
  AUTH_CACHE_MS: '5000',
  POLL_LANE: 'on',
  // The store's own deadline (MONGODB_TIMEOUT_MS): a request waits no longer for an answer.
  ANSWER_WAIT_MS: '2000',
  MAX_ANSWER_BUILDS: '8',
  LOG_REQUESTS: 'on',
  HTTPS_PORT: '8443',
} as const;

/**
 * Reads the HTTP transport's variables. Unset or empty variables take their default; every bad value is
 * reported at once in a ConfigError.
 */
export function httpSettingsFromEnv(env: Env): HttpSettings {
  const problems: string[] = [];
  const { read, optional, integer } = envReader(env, httpDefaults, problems);

  const port = integer('PORT', 0, 65535);
  const host = read('HOST');
  if (/\s/u.test(host)) problems.push(`HOST must be a host name or address, got "${host}"`);

  const corsOrigins = (env['CORS_ORIGINS'] ?? httpDefaults.CORS_ORIGINS)
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '')
    .map((origin) => {
      const normalised = toOrigin(origin);
      if (normalised === undefined) {
        problems.push(
          `CORS_ORIGINS entries must be origins such as https://app.example.org, got "${origin}"`,
        );
      }
      return normalised ?? origin;
    });

  const apiUrl = read('CODE_HOST_API_URL').replace(/\/+$/u, '');
  if (!isHttpUrl(apiUrl)) problems.push(`CODE_HOST_API_URL must be an http(s) URL, got "${apiUrl}"`);
  const repository = optional('CODE_HOST_REPOSITORY');
  if (repository !== undefined && !/^[\w.-]{1,100}\/[\w.-]{1,100}$/u.test(repository)) {
    problems.push(`CODE_HOST_REPOSITORY must be owner/name, got "${repository}"`);
  }
  const token = optional('CODE_HOST_TOKEN');
  const timeoutMs = integer('CODE_HOST_TIMEOUT_MS', 1, MAX_CODE_HOST_TIMEOUT_MS);
  const bodyLimitBytes = integer('BODY_LIMIT_BYTES', 1024, 16 * 1024 * 1024);
  const ingestBodyLimitBytes = integer('INGEST_BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024);

  const rateLimitPerMinute = integer('RATE_LIMIT_PER_MINUTE', 0, 100_000_000);
  const rateLimitRedisUrl = optional('RATE_LIMIT_REDIS_URL');
  if (rateLimitRedisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/u.test(rateLimitRedisUrl)) {
    problems.push('RATE_LIMIT_REDIS_URL must be a redis:// or rediss:// URL');
  }
  const trustProxy = parseTrustProxy(read('TRUST_PROXY'), problems);
  const allowedHosts = parseAllowedHosts(optional('ALLOWED_HOSTS'), problems);
  const bodyTimeoutMs = integer('BODY_TIMEOUT_MS', 100, 600_000);
  const headersTimeoutMs = integer('HEADERS_TIMEOUT_MS', 100, 120_000);
  const tlsHandshakeTimeoutMs = integer('TLS_HANDSHAKE_TIMEOUT_MS', 100, 120_000);
  const maxConnections = integer('MAX_CONNECTIONS', 1, 1_000_000);
  const maxConnectionsPerAddress =
    read('MAX_CONNECTIONS_PER_ADDRESS') === ''
      ? Math.max(1, Math.floor(maxConnections / 4))
      : integer('MAX_CONNECTIONS_PER_ADDRESS', 1, 1_000_000);
  const authText = read('AUTH').toLowerCase();
  const auth = (authModes as readonly string[]).includes(authText) ? (authText as AuthMode) : 'auto';
  if (auth !== authText) problems.push(`AUTH must be one of: ${authModes.join(', ')}, got "${read('AUTH')}"`);
  const authCacheMs = integer('AUTH_CACHE_MS', 0, 60_000);
  const clientDir = optional('CLIENT_DIR');
  const clientProblem = clientDir === undefined ? undefined : checkClientDir(clientDir);
  if (clientProblem !== undefined) problems.push(clientProblem);
  const clientPolicy =
    optional('CLIENT_CSP') ?? clientCsp(isHttpUrl(apiUrl) ? new URL(apiUrl).origin : undefined);
  const logRequestsText = read('LOG_REQUESTS').toLowerCase();
  if (logRequestsText !== 'on' && logRequestsText !== 'off') {
    problems.push(`LOG_REQUESTS must be on or off, got "${read('LOG_REQUESTS')}"`);
  }
  const pollLaneText = read('POLL_LANE').toLowerCase();
  if (pollLaneText !== 'on' && pollLaneText !== 'off') {
    problems.push(`POLL_LANE must be on or off, got "${read('POLL_LANE')}"`);
  }

  const answerWaitMs = integer('ANSWER_WAIT_MS', 10, 600_000);
  const maxAnswerBuilds = integer('MAX_ANSWER_BUILDS', 1, 10_000);

  // Read only here: the HTTPS listener (TLS in Hortus) listens on it, and onboarding sends boxes to it, also
  // when a proxy terminates TLS on that port.
  const httpsPort = integer('HTTPS_PORT', 0, 65535);
  const boxPublicHost = optional('BOX_PUBLIC_HOST');
  if (
    boxPublicHost !== undefined &&
    !/^[\w.-]+(:\d{1,5})?$|^\[[\da-f:.]+\](:\d{1,5})?$/iu.test(boxPublicHost)
  ) {
    problems.push(
      `BOX_PUBLIC_HOST must be a host name or address with an optional :port, got "${boxPublicHost}"`,
    );
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    httpsPort,
    ...(boxPublicHost === undefined ? {} : { boxPublicHost }),
    port,
    host,
    corsOrigins,
    codeHost: {
      apiUrl,
      timeoutMs,
      ...(repository === undefined ? {} : { repository }),
      ...(token === undefined ? {} : { token }),
    },
    bodyLimitBytes,
    ingestBodyLimitBytes,
    rateLimitPerMinute,
    ...(rateLimitRedisUrl === undefined ? {} : { rateLimitRedisUrl }),
    trustProxy,
    allowedHosts,
    bodyTimeoutMs,
    headersTimeoutMs,
    tlsHandshakeTimeoutMs,
    maxConnections,
    maxConnectionsPerAddress,
    auth,
    authCacheMs,
    pollLane: pollLaneText !== 'off',
    answerBuilds: { waitMs: answerWaitMs, maxBuilds: maxAnswerBuilds },
    logRequests: logRequestsText !== 'off',
    ...(clientDir === undefined ? {} : { client: { dir: clientDir, csp: clientPolicy } }),
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The canonical origin, or undefined when the text is not an origin alone (a path is a mistake). */
export function toOrigin(text: string): string | undefined {
  if (!isHttpUrl(text)) return undefined;
  const url = new URL(text);
  const originOnly = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return originOnly && !text.endsWith('#') && !text.endsWith('?') ? url.origin : undefined;
}

/**
 * `off` (or 0), `on` (one proxy), a count of proxies, or a comma-separated list of proxy addresses and
 * CIDR ranges (`10.0.0.0/8, ::1`).
 */
export function parseTrustProxy(text: string, problems: string[]): TrustProxy {
  const lower = text.toLowerCase();
  if (lower === 'off') return { hops: 0 };
  if (lower === 'on') return { hops: 1 };
  if (/^\d{1,2}$/u.test(lower)) return { hops: Number(lower) };
  const proxies = lower
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const bad = proxies.filter((entry) => !isAddressOrRange(entry));
  if (proxies.length === 0 || bad.length > 0) {
    problems.push(
      `TRUST_PROXY must be off, on, a number of proxies, or proxy addresses/CIDR ranges, got "${text}"`,
    );
    return { hops: 0 };
  }
  return { proxies };
}

function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/u.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

const hostNamePattern = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/u;

/** ALLOWED_HOSTS: `*`, or host names separated by commas; unset, this machine's names (defaultAllowedHosts). */
export function parseAllowedHosts(text: string | undefined, problems: string[]): readonly string[] {
  if (text === undefined) return defaultAllowedHosts();
  if (text === '*') return ['*'];
  const hosts = text
    .toLowerCase()
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const bad = hosts.filter(
    (host) => !hostNamePattern.test(host) && isIP(host.replace(/^\[|\]$/gu, '')) === 0,
  );
  if (hosts.length === 0 || bad.length > 0) {
    problems.push(`ALLOWED_HOSTS must be * or host names separated by commas, got "${text}"`);
  }
  return hosts;
}

/** The names this machine answers to without configuration: localhost names and its own host name. */
export function defaultAllowedHosts(): readonly string[] {
  const name = hostname().toLowerCase();
  const own = name === '' ? [] : [name, `${name.split('.')[0] ?? name}.local`];
  return [...new Set(['localhost', '*.localhost', ...own])];
}

/**
 * TLS in Hortus itself: `off`; `files`, a certificate and key the operator keeps (TLS_CERT_FILE,
 * TLS_KEY_FILE); `self-signed`, one Hortus creates once in its data directory (TLS=self-signed).
 */
export type TlsSettings =
  | { readonly mode: 'off' }
  | { readonly mode: 'files'; readonly certFile: string; readonly keyFile: string }
  | { readonly mode: 'self-signed' };

export const tlsDefaults = { TLS: 'off' } as const;

/**
 * Reads TLS, TLS_CERT_FILE and TLS_KEY_FILE; every bad combination is reported at once. The port is
 * HTTPS_PORT of the HTTP settings (httpsPort).
 */
export function tlsSettingsFromEnv(env: Env): TlsSettings {
  const problems: string[] = [];
  const { read, optional } = envReader(env, tlsDefaults, problems);
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
  if (certFile !== undefined && keyFile !== undefined) return { mode: 'files', certFile, keyFile };
  return mode === 'self-signed' ? { mode: 'self-signed' } : { mode: 'off' };
}

/** A certificate chain and its private key, PEM-encoded. */
export interface TlsMaterial {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}
