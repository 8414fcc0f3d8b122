import { ConflictError, type ResourceName, StoreUnavailableError } from '@hortus/core';
import {
  type Collection,
  type Db,
  type Document,
  type IndexDescription,
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  ObjectId,
} from 'mongodb';

/** Token of the `Db` handle (database name and write concern already applied) the repositories share. */
export const MONGO_DB = Symbol.for('hortus.mongo.Db');

/** A collection with the indexes its repository's queries need; `ensureIndexes` creates them at start. */
export interface CollectionSpec {
  readonly name: string;
  readonly indexes: readonly IndexDescription[];
}

const DUPLICATE_KEY_CODES = new Set([11000, 11001]);

/** Server answers that mean "no usable primary right now", as opposed to a bad request. */
const UNAVAILABLE_SERVER_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  50, // MaxTimeMSExpired
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

export function isDuplicateKeyCode(code: unknown): boolean {
  return DUPLICATE_KEY_CODES.has(Number(code));
}

export function isDuplicateKeyError(error: unknown): boolean {
  if (!(error instanceof MongoServerError)) return false;
  if (isDuplicateKeyCode(error.code)) return true;
  // FerretDB v1 reports a unique violation caused by an update as InternalError with SQLite's text.
  return error.code === 1 && error.message.includes('UNIQUE constraint failed');
}

// Driver 7.9 lets a raw socket error escape when it writes to a connection the server already closed.
const SOCKET_ERROR_CODES = new Set([
  'EPIPE',
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

export function isUnavailableError(error: unknown): boolean {
  // A bulk write (insertMany) that could not reach the server throws a MongoBulkWriteError carrying the
  // network or selection error as its errorResponse, and no server code of its own.
  if (error instanceof MongoBulkWriteError) {
    const wrapped: unknown = error.errorResponse;
    if (wrapped instanceof Error && wrapped !== error && isUnavailableError(wrapped)) return true;
  }
  return (
    (error instanceof Error && SOCKET_ERROR_CODES.has(String((error as NodeJS.ErrnoException).code))) ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoClientClosedError ||
    error instanceof MongoServerClosedError ||
    (error instanceof MongoServerError && UNAVAILABLE_SERVER_CODES.has(Number(error.code))) ||
    // FerretDB on SQLite gives up on a write lock held too long by other writers: busy, so retry later.
    (error instanceof MongoServerError && error.message.includes('SQLITE_BUSY'))
  );
}

/** Domain errors pass through; driver errors become the domain error callers can act on. */
export function toDomainError(error: unknown, resource: ResourceName, conflictMessage: string): unknown {
  if (isDuplicateKeyError(error)) return new ConflictError(resource, conflictMessage);
  if (isUnavailableError(error)) return new StoreUnavailableError(undefined, { cause: error });
  return error;
}

/** Shared by every repository: one collection, and driver errors translated on the way out. */
export abstract class MongoRepository<TDocument extends Document> {
  protected readonly collection: Collection<TDocument>;

  protected constructor(
    db: Db,
    spec: CollectionSpec,
    private readonly resource: ResourceName,
    private readonly conflictMessage: string,
  ) {
    this.collection = db.collection<TDocument>(spec.name);
  }

  protected async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw toDomainError(error, this.resource, this.conflictMessage);
    }
  }
}

const objectIdPattern = /^[0-9a-f]{24}$/iu;

/**
 * The ObjectId an entity id names, or undefined for any text the store cannot have issued. The pattern
 * check matters: `ObjectId.isValid` also accepts any 12-character string.
 */
export function toObjectId(id: string): ObjectId | undefined {
  return typeof id === 'string' && objectIdPattern.test(id) && ObjectId.isValid(id)
    ? ObjectId.createFromHexString(id)
    : undefined;
}

export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

// Client-written JSON may use keys MongoDB refuses or reads as paths ("a.b", "$x", NUL). They are stored
// percent-escaped; every other key is stored as is, so field paths built from plain names still apply.
// eslint-disable-next-line no-control-regex -- NUL cannot be part of a BSON key, so it must be escaped
const unsafeKeyCharacters = /[%.$\u0000]/gu;
const escapedKeyCharacter = /%(25|2E|24|00)/gu;

function escapeKey(key: string): string {
  return key.replace(
    unsafeKeyCharacters,
    (character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`,
  );
}

function unescapeKey(key: string): string {
  return key.replace(escapedKeyCharacter, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Only literal objects: driver values (ObjectId, Decimal128, ...) in older records pass unchanged. */
export function isLiteralObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function mapKeys(value: unknown, mapKey: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapKeys(item, mapKey));
  if (!isLiteralObject(value)) return value;
  const mapped: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) mapped[mapKey(key)] = mapKeys(item, mapKey);
  return mapped;
}

/** Free-form JSON (chart data, group settings) as stored. */
export function toStoredJson(value: unknown): unknown {
  return mapKeys(value, escapeKey);
}

/** Stored free-form JSON back as the client wrote it. */
export function fromStoredJson(value: unknown): unknown {
  return mapKeys(value, unescapeKey);
}
