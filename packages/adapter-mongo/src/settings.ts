// The store's settings from the environment: a module of its own, so reading the configuration does not load
// the MongoDB driver (the CLI reads it for every command).
// `import type`: erased, so reading the settings does not load the driver.
import type { W } from 'mongodb';
import { InvalidInputError } from '@hortus/core';

/** How often a process's mirror of the revisions asks the database what changed (MONGODB_REVISION_POLL_MS). */
export const DEFAULT_REVISION_POLL_MS = 250;
export const MAX_REVISION_POLL_MS = 60_000;
export const DEFAULT_DB_NAME = 'hortus';
export const DEFAULT_WRITE_CONCERN: W = 'majority';
/** How long a request waits for a reachable server before it fails with StoreUnavailableError. */
export const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 2000;
/**
 * How long one store operation may take before it fails with StoreUnavailableError (MONGODB_TIMEOUT_MS):
 * a frozen server is then answered like a dead one. The driver's client-side `timeoutMS` is a no-op from
 * driver 7 on, so the deadline is the adapter's own, with the driver's socket and connect timeouts set
 * a little above it to end the abandoned commands.
 */
export const DEFAULT_OPERATION_TIMEOUT_MS = 2000;
export const MIN_OPERATION_TIMEOUT_MS = 100;
export const MAX_OPERATION_TIMEOUT_MS = 600_000;
/** Which database the repositories use and how writes are acknowledged. */
export interface MongoDatabaseOptions {
  readonly dbName: string;
  /** `majority` (the default) or a number of members; `w` in the URI applies when this is absent. */
  readonly writeConcern?: W;
  /** The deadline of each store operation; DEFAULT_OPERATION_TIMEOUT_MS when absent, 0 for none. */
  readonly operationTimeoutMS?: number;
  /**
   * How often each process refreshes its mirror of the revisions (the ETags of polled groups);
   * DEFAULT_REVISION_POLL_MS when absent, 0 for no mirror (a query per poll). See RevisionMirror.
   */
  readonly revisionPollMS?: number;
}

export interface MongoStoreSettings extends Partial<MongoDatabaseOptions> {
  readonly uri: string;
  /** Overrides `serverSelectionTimeoutMS` in the URI; without either, 2000. */
  readonly serverSelectionTimeoutMS?: number;
}

/**
 * Reads MONGODB_URI, MONGODB_DB, MONGODB_WRITE_CONCERN, MONGODB_TIMEOUT_MS and MONGODB_REVISION_POLL_MS;
 * undefined when no URI is set.
 */
export function mongoSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): MongoStoreSettings | undefined {
  const uri = env['MONGODB_URI']?.trim();
  if (uri === undefined || uri === '') return undefined;
  const dbName = env['MONGODB_DB']?.trim();
  const writeConcern = env['MONGODB_WRITE_CONCERN']?.trim();
  const timeout = env['MONGODB_TIMEOUT_MS']?.trim();
  const revisionPoll = env['MONGODB_REVISION_POLL_MS']?.trim();
  return {
    uri,
    ...(dbName === undefined || dbName === '' ? {} : { dbName }),
    ...(timeout === undefined || timeout === ''
      ? {}
      : { operationTimeoutMS: parseOperationTimeout(timeout) }),
    ...(revisionPoll === undefined || revisionPoll === ''
      ? {}
      : { revisionPollMS: parseRevisionPoll(revisionPoll) }),
    ...(writeConcern === undefined || writeConcern === ''
      ? {}
      : { writeConcern: parseWriteConcern(writeConcern) }),
  };
}

/** `majority` or a whole number of members that must acknowledge a write. */
export function parseWriteConcern(text: string): W {
  if (/^\d{1,2}$/u.test(text)) return Number(text);
  if (text === 'majority') return text;
  throw InvalidInputError.forField('MONGODB_WRITE_CONCERN', 'must be "majority" or a number of members');
}

/** MONGODB_TIMEOUT_MS: whole milliseconds within bounds. */
export function parseOperationTimeout(text: string): number {
  const value = /^\d{1,7}$/u.test(text) ? Number(text) : Number.NaN;
  if (!(value >= MIN_OPERATION_TIMEOUT_MS && value <= MAX_OPERATION_TIMEOUT_MS)) {
    throw InvalidInputError.forField(
      'MONGODB_TIMEOUT_MS',
      `must be a whole number from ${MIN_OPERATION_TIMEOUT_MS} to ${MAX_OPERATION_TIMEOUT_MS}, got "${text}"`,
    );
  }
  return value;
}

/** MONGODB_REVISION_POLL_MS: whole milliseconds, 0 (no mirror) up to MAX_REVISION_POLL_MS. */
export function parseRevisionPoll(text: string): number {
  const value = /^\d{1,6}$/u.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 0 && value <= MAX_REVISION_POLL_MS)) {
    throw InvalidInputError.forField(
      'MONGODB_REVISION_POLL_MS',
      `must be a whole number from 0 (off) to ${MAX_REVISION_POLL_MS}, got "${text}"`,
    );
  }
  return value;
}

/** The database named in the URI path, if any (`mongodb://host/<db>?...`). */
export function dbNameInUri(uri: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/u.exec(uri)?.[1];
  return path === undefined || path === '' ? undefined : decodeURIComponent(path);
}
