import { type Env } from '@hortus/core';

/**
 * Every environment variable some part of Hortus reads. packages/cli/test/config-check.test.ts finds the
 * names each package's settings parser reads and fails when one is missing here, so a new setting cannot be
 * reported as unknown.
 */
export const knownVariables: readonly string[] = [
  'ALERT_DELIVERY_MS',
  'ALERT_REOPEN_MS',
  'ALERT_REPEAT_MS',
  'ALLOWED_HOSTS',
  'ANSWER_WAIT_MS',
  'APP_URL',
  'AUTH',
  'AUTH_CACHE_MS',
  'AUTH_SECRET',
  'AUTOMATIONS',
  'AUTOMATION_TICK_MS',
  'BACKUP_DIR',
  'BACKUP_HOOK',
  'BACKUP_INTERVAL',
  'BACKUP_KEEP',
  'BCRYPT_COST',
  'BODY_LIMIT_BYTES',
  'BODY_TIMEOUT_MS',
  'BOX_PUBLIC_HOST',
  'BOX_START_GRACE_MS',
  'BOX_TIME_ZONE',
  'CLIENT_CSP',
  'CLIENT_DIR',
  'CODE_HOST_API_URL',
  'CODE_HOST_REPOSITORY',
  'CODE_HOST_TIMEOUT_MS',
  'CODE_HOST_TOKEN',
  'COMMITS_CACHE_MS',
  'CORS_ORIGINS',
  'DEVICE_SILENT_AFTER_MS',
  'HEADERS_TIMEOUT_MS',
  'HORTUS_DATA_DIR',
  'HORTUS_ENV_FILE',
  'HORTUS_SQLITE_BUSY_TIMEOUT_MS',
  'HORTUS_SQLITE_SYNCHRONOUS',
  'HOST',
  'HTTPS_PORT',
  'INGEST_BODY_LIMIT_BYTES',
  'LOG_FORMAT',
  'LOG_LEVEL',
  'LOG_REQUESTS',
  'MAIL_FROM',
  'MAX_ANSWER_BUILDS',
  'MAX_CHARTS_PER_USER',
  'MAX_CLOCK_SKEW_MS',
  'MAX_CONNECTIONS',
  'MAX_CONNECTIONS_PER_ADDRESS',
  'MAX_DEVICES_PER_GROUP',
  'MAX_OPEN_NOTIFICATIONS_PER_GROUP',
  'MAX_PENDING_DEVICES',
  'MAX_TOPICS_PER_GROUP',
  'MONGODB_DB',
  'MONGODB_REVISION_POLL_MS',
  'MONGODB_TIMEOUT_MS',
  'MONGODB_URI',
  'MONGODB_WRITE_CONCERN',
  'MQTT_CLIENT_ID',
  'MQTT_COMMANDS',
  'MQTT_COMMAND_CREDENTIALS',
  'MQTT_DISCOVERY',
  'MQTT_DISCOVERY_PREFIX',
  'MQTT_MAX_PAYLOAD_BYTES',
  'MQTT_PASSWORD',
  'MQTT_PUBLISH_PREFIX',
  'MQTT_SHARED_GROUP',
  'MQTT_STATE_POLL_MS',
  'MQTT_TOPIC',
  'MQTT_URL',
  'MQTT_USERNAME',
  'POLL_LANE',
  'PORT',
  'RATE_LIMIT_PER_MINUTE',
  'RATE_LIMIT_REDIS_URL',
  'RETENTION_DAYS',
  'ROLLUP_RETENTION_DAYS',
  'SIGNUP',
  'SIGNUPS_PER_ADDRESS',
  'SIGNUPS_TOTAL',
  'SMTP_URL',
  // Where SQLite puts VACUUM's temporary copy; the start checks its free space (adapter-sqlite vacuum.ts).
  'SQLITE_TMPDIR',
  'STORE',
  'TIME_ZONE',
  'TMPDIR',
  'TLS',
  'TLS_CERT_FILE',
  'TLS_HANDSHAKE_TIMEOUT_MS',
  'TLS_KEY_FILE',
  'TRUST_PROXY',
  'UNKNOWN_DEVICE_PER_MINUTE',
  'WEBHOOK_TIMEOUT_MS',
];

/** Names only Hortus uses: any other variable under them is a mistake. */
const ownPrefixes = ['HORTUS_', 'MONGODB_', 'MQTT_', 'SMTP_', 'MAIL_', 'TLS_', 'CODE_HOST_', 'WEBHOOK_'];
/** Switches of the test suites, not of the server. */
const testPrefix = 'HORTUS_TEST_';

export interface UnknownVariable {
  readonly name: string;
  /** The known variable it most likely means. */
  readonly didYouMean?: string;
}

/**
 * The variables that look meant for Hortus but that it does not read: any under its own prefixes
 * (`HORTUS_DATADIR`), and any other one letter away from a known name (`PORTT`). Other variables of the
 * environment (PATH, HOME...) are none of its business and are not reported.
 */
export function unknownVariables(env: Env): UnknownVariable[] {
  const known = new Set(knownVariables);
  const found: UnknownVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || name.startsWith(testPrefix)) continue;
    const nearest = nearestKnown(name);
    const ours = ownPrefixes.some((prefix) => name.startsWith(prefix));
    if (ours || (nearest !== undefined && nearest.distance <= 1)) {
      found.push({
        name,
        ...(nearest !== undefined && nearest.distance <= 3 ? { didYouMean: nearest.name } : {}),
      });
    }
  }
  return found;
}

/** One line per unknown variable, as `config check` prints and `serve` logs them. */
export function describeUnknown({ name, didYouMean }: UnknownVariable): string {
  return `${name} is not a Hortus setting${didYouMean === undefined ? '' : ` (did you mean ${didYouMean}?)`}`;
}

function nearestKnown(name: string): { name: string; distance: number } | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of knownVariables) {
    const distance = editDistance(name, candidate);
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each cost 1. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
