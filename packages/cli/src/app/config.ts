// Settings come from each package's light `settings` module: reading the configuration (every command
// does) must not load a database driver, Koa or the MQTT client.
import { mongoSettingsFromEnv, type MongoStoreSettings } from '@hortus/adapter-mongo/settings';
import {
  DEFAULT_DATA_DIR,
  sqliteSettingsFromEnv,
  type SqliteStoreSettings,
} from '@hortus/adapter-sqlite/settings';
import {
  type BoxSettings,
  boxSettingsFromEnv,
  collectProblems,
  ConfigError,
  type CoreLimits,
  coreLimitsFromEnv,
  type Env,
  envReader,
  DEFAULT_TIME_ZONE,
  isValidTimeZone,
  type LogLevel,
  logLevels,
  type RetentionSettings,
  retentionSettingsFromEnv,
} from '@hortus/core';
import {
  httpSettingsFromEnv,
  type HttpSettings,
  type TlsSettings,
  tlsSettingsFromEnv,
} from '@hortus/http-koa/settings';
import { type IdentitySettings, identitySettingsFromEnv } from '@hortus/identity';
import {
  type MailSettings,
  mailSettingsFromEnv,
  type WebhookSettings,
  webhookSettingsFromEnv,
} from '@hortus/mail';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type BackupSettings, backupSettingsFromEnv } from './backups.js';
import { type MqttConfig, mqttConfigFromEnv, mqttConfigProblems } from '@hortus/mqtt/settings';

/** sqlite: one file on this machine (the default); mongodb: a database server; memory: gone at exit. */
export const storeKinds = ['sqlite', 'memory', 'mongodb'] as const;
export type StoreKind = (typeof storeKinds)[number];

/**
 * What the data commands need: the store, the core's settings, accounts and mail. The settings of the
 * HTTP server, TLS, MQTT and backups are `serve`'s alone, so a mistake in one of them never stops a command
 * on the data (a bad CORS_ORIGINS does not break `hortus device claim`).
 */
export interface DataConfig {
  readonly store: StoreKind;
  /** The embedded store's file and settings (HORTUS_DATA_DIR, ...); set whenever the store is sqlite. */
  readonly sqlite?: SqliteStoreSettings;
  readonly mongodbUri?: string;
  /** Connection settings of the Mongo store (MONGODB_URI, MONGODB_DB, MONGODB_WRITE_CONCERN). */
  readonly mongo?: MongoStoreSettings;
  readonly timeZone: string;
  readonly commitsCacheMs: number;
  /** Whether this server runs the automation engine (rules and alerts). */
  readonly automations: boolean;
  readonly automationTickMs: number;
  /** Limits on stored data (MAX_CLOCK_SKEW_MS, MAX_TOPICS_PER_GROUP, ...), parsed by the core. */
  readonly limits: CoreLimits;
  /** How long readings and rollups are kept (RETENTION_DAYS, ROLLUP_RETENTION_DAYS); empty: forever. */
  readonly retention: Partial<RetentionSettings>;
  /** Boxes of the HTTP generation (BOX_TIME_ZONE, DEVICE_SILENT_AFTER_MS, MAX_PENDING_DEVICES, ...). */
  readonly boxes: BoxSettings;
  /** Accounts: passwords, log-in tokens, reset links, sign-up (AUTH_SECRET, APP_URL, SIGNUP, BCRYPT_COST). */
  readonly identity: IdentitySettings;
  /** Outgoing mail (SMTP_URL, MAIL_FROM); without SMTP_URL mail goes to the log. */
  readonly mail: MailSettings;
  /** LOG_LEVEL: the least severe log lines written (debug, info, warn, error). */
  readonly logLevel: LogLevel;
  /** LOG_FORMAT: json (one JSON line per event), text (for people), or auto: text on a terminal, else json. */
  readonly logFormat: 'json' | 'text' | 'auto';
  /** How often the outbox of alert messages is worked (ALERT_DELIVERY_MS); by default 5 s. */
  readonly alertDeliveryMs?: number;
  /** Alert webhooks (WEBHOOK_TIMEOUT_MS); defaults when absent. */
  readonly webhooks?: WebhookSettings;
}

/** The whole application's configuration: the data commands' part, the HTTP transport, TLS, MQTT, backups. */
export interface AppConfig extends HttpSettings, DataConfig {
  /** The MQTT bridge's settings; unset when MQTT_URL is not configured (the bridge is off). */
  readonly mqtt?: MqttConfig;
  /** HTTPS beside plain HTTP (TLS_CERT_FILE/TLS_KEY_FILE or TLS=self-signed, HTTPS_PORT); off when absent. */
  readonly tls?: TlsSettings;
  /** HORTUS_DATA_DIR: the SQLite file's directory, and where TLS=self-signed keeps its certificate. */
  readonly dataDir?: string;
  /** Scheduled backups of the SQLite store (BACKUP_DIR, BACKUP_INTERVAL, BACKUP_KEEP); off without BACKUP_DIR. */
  readonly backups?: BackupSettings;
}

export const MIN_COMMITS_CACHE_MS = 30_000;
const DAY_MS = 86_400_000;

export const appDefaults = {
  TIME_ZONE: DEFAULT_TIME_ZONE,
  COMMITS_CACHE_MS: '60000',
  AUTOMATIONS: 'on',
  AUTOMATION_TICK_MS: '10000',
  LOG_LEVEL: 'info',
  LOG_FORMAT: 'auto',
  ALERT_DELIVERY_MS: '5000',
} as const;

/**
 * Time rules are set to the minute and fire within a 5-minute grace: a tick longer than a minute would make
 * them late, so that is the ceiling. The floor only guards against a typo that would spin the store.
 */
export const MIN_AUTOMATION_TICK_MS = 10;
export const MAX_AUTOMATION_TICK_MS = 60_000;

/** The data commands' part of the configuration; every bad value in it reported at once. */
export function loadDataConfig(env: Env = process.env): DataConfig {
  const problems: string[] = [];
  const data = readDataConfig(env, problems);
  if (problems.length > 0 || data === undefined) throw new ConfigError(problems);
  return data;
}

function readDataConfig(env: Env, problems: string[]): DataConfig | undefined {
  const { read, optional, integer, onOff } = envReader(env, appDefaults, problems);

  const mongodbUri = optional('MONGODB_URI');
  const storeText = optional('STORE')?.toLowerCase() ?? (mongodbUri === undefined ? 'sqlite' : 'mongodb');
  const store = (storeKinds as readonly string[]).includes(storeText) ? (storeText as StoreKind) : 'sqlite';
  if (store !== storeText)
    problems.push(`STORE must be one of: ${storeKinds.join(', ')}, got "${storeText}"`);
  if (store === 'mongodb' && mongodbUri === undefined) {
    problems.push('MONGODB_URI is required when STORE is mongodb');
  }
  if (mongodbUri !== undefined && !/^mongodb(\+srv)?:\/\/\S+$/u.test(mongodbUri)) {
    problems.push('MONGODB_URI must start with mongodb:// or mongodb+srv://');
  }
  const mongo = collectProblems(problems, () => mongoSettingsFromEnv(env));
  const sqlite = store === 'sqlite' ? collectProblems(problems, () => sqliteSettingsFromEnv(env)) : undefined;

  const timeZone = read('TIME_ZONE');
  if (!isValidTimeZone(timeZone)) problems.push(`TIME_ZONE must be an IANA time zone, got "${timeZone}"`);
  const commitsCacheMs = integer('COMMITS_CACHE_MS', MIN_COMMITS_CACHE_MS, DAY_MS);
  const automations = onOff('AUTOMATIONS');
  const automationTickMs = integer('AUTOMATION_TICK_MS', MIN_AUTOMATION_TICK_MS, MAX_AUTOMATION_TICK_MS);
  const alertDeliveryMs = integer('ALERT_DELIVERY_MS', MIN_AUTOMATION_TICK_MS, 10 * MAX_AUTOMATION_TICK_MS);

  const logLevelText = read('LOG_LEVEL').toLowerCase();
  const logLevel = (logLevels as readonly string[]).includes(logLevelText)
    ? (logLevelText as LogLevel)
    : 'info';
  if (logLevel !== logLevelText)
    problems.push(`LOG_LEVEL must be one of: ${logLevels.join(', ')}, got "${logLevelText}"`);
  const logFormatText = read('LOG_FORMAT').toLowerCase();
  const logFormat = logFormatText === 'json' || logFormatText === 'text' ? logFormatText : 'auto';
  if (logFormat !== logFormatText)
    problems.push(`LOG_FORMAT must be one of: auto, json, text, got "${logFormatText}"`);

  const limits = collectProblems(problems, () => coreLimitsFromEnv(env));
  const retention = collectProblems(problems, () => retentionSettingsFromEnv(env));
  const boxes = collectProblems(problems, () => boxSettingsFromEnv(env));
  const identity = collectProblems(problems, () => identitySettingsFromEnv(env));
  const mail = collectProblems(problems, () => mailSettingsFromEnv(env));
  const webhooks = collectProblems(problems, () => webhookSettingsFromEnv(env));
  if (
    limits === undefined ||
    retention === undefined ||
    boxes === undefined ||
    identity === undefined ||
    mail === undefined
  ) {
    return undefined;
  }
  return {
    store,
    ...(sqlite === undefined ? {} : { sqlite }),
    ...(mongodbUri === undefined ? {} : { mongodbUri }),
    ...(mongo === undefined ? {} : { mongo }),
    timeZone,
    commitsCacheMs,
    automations,
    automationTickMs,
    alertDeliveryMs,
    limits,
    retention,
    boxes,
    identity,
    mail,
    logLevel,
    logFormat,
    ...(webhooks === undefined ? {} : { webhooks }),
  };
}

/**
 * The console's build (packages/console/dist) where the package is installed beside the CLI; undefined
 * when it is not (a CLI installed alone), and then /console/ is not answered.
 */
export function consoleBuildDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@hortus/console/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

/**
 * Reads the whole configuration from environment variables (what `serve` and `config check` need): each
 * package parses its own part, and every bad value of every part is reported at once in one ConfigError.
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const http = collectProblems(problems, () => httpSettingsFromEnv(env));
  const data = readDataConfig(env, problems);
  const tls = collectProblems(problems, () => tlsSettingsFromEnv(env));
  const dataDir = envReader(env, appDefaults, problems).optional('HORTUS_DATA_DIR') ?? DEFAULT_DATA_DIR;

  const backups = backupSettingsFromEnv(env, problems);

  const mqtt = mqttConfigFromEnv(env);
  if (mqtt !== undefined) problems.push(...mqttConfigProblems(mqtt));

  if (problems.length > 0 || http === undefined || data === undefined) {
    throw new ConfigError(problems);
  }
  const consoleDir = consoleBuildDir();
  return {
    ...http,
    ...(consoleDir === undefined ? {} : { console: { dir: consoleDir } }),
    // Only a public address the operator gave: the default APP_URL (localhost) must not widen ALLOWED_HOSTS.
    allowedHosts:
      (env['APP_URL'] ?? '').trim() === ''
        ? http.allowedHosts
        : withAppUrlHost(http.allowedHosts, data.identity.accounts.appUrl),
    ...data,
    ...(mqtt === undefined ? {} : { mqtt }),
    ...(tls === undefined ? {} : { tls }),
    dataDir,
    ...(backups === undefined ? {} : { backups }),
  };
}

/**
 * The host of the server's public address (APP_URL) is one clients name, so it is allowed along with
 * ALLOWED_HOSTS (or this machine's names); `*` stays `*`.
 */
export function withAppUrlHost(allowedHosts: readonly string[], appUrl: string): readonly string[] {
  if (allowedHosts.includes('*')) return allowedHosts;
  let host: string;
  try {
    host = new URL(appUrl).hostname.toLowerCase().replace(/^\[|\]$/gu, '');
  } catch {
    return allowedHosts;
  }
  return host === '' || allowedHosts.includes(host) ? allowedHosts : [...allowedHosts, host];
}
