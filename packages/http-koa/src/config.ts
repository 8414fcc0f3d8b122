import { mongoSettingsFromEnv, type MongoStoreSettings } from '@hortus/adapter-mongo';
import { isValidTimeZone } from '@hortus/core';
import { type MqttConfig, mqttConfigFromEnv, mqttConfigProblems } from '@hortus/mqtt';

export const storeKinds = ['memory', 'mongodb'] as const;
export type StoreKind = (typeof storeKinds)[number];

/** auto: access keys are required once the store holds one; on: always required; off: never. */
export const authModes = ['auto', 'on', 'off'] as const;
export type AuthMode = (typeof authModes)[number];

export interface CodeHostConfig {
  /** Base URL of the code host's REST API; tests point it at a fake host on 127.0.0.1. */
  readonly apiUrl: string;
  /** `owner/name` of the repository whose main branch is passed through; unset answers the route's 500. */
  readonly repository?: string;
  readonly token?: string;
  readonly timeoutMs: number;
}

export interface HttpConfig {
  readonly port: number;
  readonly host: string;
  /** Exact origins (scheme://host[:port]) allowed to call with credentials. */
  readonly corsOrigins: readonly string[];
  readonly store: StoreKind;
  readonly mongodbUri?: string;
  /** Connection settings of the Mongo store (MONGODB_URI, MONGODB_DB, MONGODB_WRITE_CONCERN). */
  readonly mongo?: MongoStoreSettings;
  readonly timeZone: string;
  readonly codeHost: CodeHostConfig;
  readonly commitsCacheMs: number;
  readonly bodyLimitBytes: number;
  /** Body limit of POST /api/data/readings, which carries batches of up to 5000 readings. */
  readonly ingestBodyLimitBytes: number;
  /** Whether this server runs the automation engine (rules and alerts). */
  readonly automations: boolean;
  readonly automationTickMs: number;
  /** The MQTT bridge's settings; unset when MQTT_URL is not configured (the bridge is off). */
  readonly mqtt?: MqttConfig;
  /** Requests per minute one client (IP address) may make; 0 turns the limit off. */
  readonly rateLimitPerMinute: number;
  /** Behind a reverse proxy: the client address is taken from X-Forwarded-For. */
  readonly trustProxy: boolean;
  readonly auth: AuthMode;
  /** How long the answers to "are keys in use" and "whose key is this" are reused. */
  readonly authCacheMs: number;
}

/** Thrown by loadConfig with every problem found, so one start reports all of them. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export const MAX_CODE_HOST_TIMEOUT_MS = 5000;
export const MIN_COMMITS_CACHE_MS = 30_000;
const DAY_MS = 86_400_000;

export const configDefaults = {
  PORT: '8080',
  HOST: '0.0.0.0',
  CORS_ORIGINS: 'http://localhost:3000',
  TIME_ZONE: 'UTC',
  CODE_HOST_API_URL: 'https://api.github.com',
  CODE_HOST_TIMEOUT_MS: String(MAX_CODE_HOST_TIMEOUT_MS),
  COMMITS_CACHE_MS: '60000',
  BODY_LIMIT_BYTES: String(1024 * 1024),
  // A 5000-reading batch is about 0.55 MB with usual names and 2.1 MB pretty-printed with the longest
  // names allowed (group 100, topic 200 characters): 4 MiB leaves room for whitespace and extra fields.
  INGEST_BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
  AUTOMATIONS: 'on',
  AUTOMATION_TICK_MS: '10000',
  // Ten requests a second per client: a polling web client makes about one, a burst of 600 passes.
  RATE_LIMIT_PER_MINUTE: '600',
  TRUST_PROXY: 'off',
  AUTH: 'auto',
  AUTH_CACHE_MS: '5000',
} as const;

/**
 * Time rules are set to the minute and fire within a 5-minute grace: a tick longer than a minute would make
 * them late, so that is the ceiling. The floor only guards against a typo that would spin the store.
 */
export const MIN_AUTOMATION_TICK_MS = 10;
export const MAX_AUTOMATION_TICK_MS = 60_000;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads the configuration from environment variables. Unset or empty variables take their default;
 * every bad value is reported at once in a ConfigError.
 */
export function loadConfig(env: Env = process.env): HttpConfig {
  const problems: string[] = [];
  const read = (name: keyof typeof configDefaults): string => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? configDefaults[name] : value;
  };
  const optional = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: keyof typeof configDefaults, min: number, max: number): number => {
    const text = read(name);
    const value = /^\d+$/u.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
      return Number(configDefaults[name]);
    }
    return value;
  };

  const port = integer('PORT', 0, 65535);
  const host = read('HOST');
  if (/\s/u.test(host)) problems.push(`HOST must be a host name or address, got "${host}"`);

  const corsOrigins = (env['CORS_ORIGINS'] ?? configDefaults.CORS_ORIGINS)
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

  const mongodbUri = optional('MONGODB_URI');
  const storeText = optional('STORE') ?? (mongodbUri === undefined ? 'memory' : 'mongodb');
  const store = (storeKinds as readonly string[]).includes(storeText) ? (storeText as StoreKind) : 'memory';
  if (store !== storeText)
    problems.push(`STORE must be one of: ${storeKinds.join(', ')}, got "${storeText}"`);
  if (store === 'mongodb' && mongodbUri === undefined) {
    problems.push('MONGODB_URI is required when STORE is mongodb');
  }
  if (mongodbUri !== undefined && !/^mongodb(\+srv)?:\/\/\S+$/u.test(mongodbUri)) {
    problems.push('MONGODB_URI must start with mongodb:// or mongodb+srv://');
  }
  let mongo: MongoStoreSettings | undefined;
  try {
    mongo = mongoSettingsFromEnv(env);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  }

  const timeZone = read('TIME_ZONE');
  if (!isValidTimeZone(timeZone)) problems.push(`TIME_ZONE must be an IANA time zone, got "${timeZone}"`);

  const apiUrl = read('CODE_HOST_API_URL').replace(/\/+$/u, '');
  if (!isHttpUrl(apiUrl)) problems.push(`CODE_HOST_API_URL must be an http(s) URL, got "${apiUrl}"`);
  const repository = optional('CODE_HOST_REPOSITORY');
  if (repository !== undefined && !/^[\w.-]{1,100}\/[\w.-]{1,100}$/u.test(repository)) {
    problems.push(`CODE_HOST_REPOSITORY must be owner/name, got "${repository}"`);
  }
  const token = optional('CODE_HOST_TOKEN');
  const timeoutMs = integer('CODE_HOST_TIMEOUT_MS', 1, MAX_CODE_HOST_TIMEOUT_MS);
  const commitsCacheMs = integer('COMMITS_CACHE_MS', MIN_COMMITS_CACHE_MS, DAY_MS);
  const bodyLimitBytes = integer('BODY_LIMIT_BYTES', 1024, 16 * 1024 * 1024);
  const ingestBodyLimitBytes = integer('INGEST_BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024);

  const automationsText = read('AUTOMATIONS').toLowerCase();
  if (automationsText !== 'on' && automationsText !== 'off') {
    problems.push(`AUTOMATIONS must be on or off, got "${read('AUTOMATIONS')}"`);
  }
  const automationTickMs = integer('AUTOMATION_TICK_MS', MIN_AUTOMATION_TICK_MS, MAX_AUTOMATION_TICK_MS);

  const mqtt = mqttConfigFromEnv(env);
  if (mqtt !== undefined) problems.push(...mqttConfigProblems(mqtt));

  const rateLimitPerMinute = integer('RATE_LIMIT_PER_MINUTE', 0, 1_000_000);
  const trustProxyText = read('TRUST_PROXY').toLowerCase();
  if (trustProxyText !== 'on' && trustProxyText !== 'off') {
    problems.push(`TRUST_PROXY must be on or off, got "${read('TRUST_PROXY')}"`);
  }
  const authText = read('AUTH').toLowerCase();
  const auth = (authModes as readonly string[]).includes(authText) ? (authText as AuthMode) : 'auto';
  if (auth !== authText) problems.push(`AUTH must be one of: ${authModes.join(', ')}, got "${read('AUTH')}"`);
  const authCacheMs = integer('AUTH_CACHE_MS', 0, 60_000);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host,
    corsOrigins,
    store,
    ...(mongodbUri === undefined ? {} : { mongodbUri }),
    ...(mongo === undefined ? {} : { mongo }),
    timeZone,
    codeHost: {
      apiUrl,
      timeoutMs,
      ...(repository === undefined ? {} : { repository }),
      ...(token === undefined ? {} : { token }),
    },
    commitsCacheMs,
    bodyLimitBytes,
    ingestBodyLimitBytes,
    automations: automationsText !== 'off',
    automationTickMs,
    ...(mqtt === undefined ? {} : { mqtt }),
    rateLimitPerMinute,
    trustProxy: trustProxyText === 'on',
    auth,
    authCacheMs,
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
