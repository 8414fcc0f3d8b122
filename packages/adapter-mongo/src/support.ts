import {
  ConflictError,
  InvalidInputError,
  type ResourceName,
  StoreDeadlineError,
  StoreUnavailableError,
} from '@hortus/core';
import {
  type Collection,
  type Document,
  type Filter,
  type IndexDescription,
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  ObjectId,
  type OptionalUnlessRequiredId,
  type WriteError,
} from 'mongodb';

/** Token of the database context (MongoDatabase: the `Db` handle, its deadline and revision mirror) the repositories share. */
export const MONGO_DATABASE = Symbol.for('hortus.mongo.Database');

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

/** One write of a bulk write failed on a unique index. */
export function isDuplicateWriteError(writeError: WriteError): boolean {
  return (
    isDuplicateKeyCode(writeError.code) ||
    // FerretDB v1 reports a unique violation caused by an update as InternalError with SQLite's text.
    (writeError.code === 1 && writeError.errmsg?.includes('UNIQUE constraint failed') === true)
  );
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
    error instanceof MongoOperationTimeoutError ||
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

/** What every repository takes from its database context (MongoDatabase, database.ts). */
export interface DatabaseHandle {
  collection<TDocument extends Document>(name: string): Collection<TDocument>;
  /** The deadline of every store operation; none when unset. */
  readonly operationDeadlineMs: number | undefined;
}

/**
 * The operation's outcome, or StoreDeadlineError (a StoreUnavailableError) once `deadlineMs` has passed.
 * The driver's own timeouts are per socket round trip and retried, so a frozen server held requests for 6
 * to 8 s; this bounds the wait as a whole. The abandoned operation ends by the driver's socket timeout.
 */
export async function withDeadline<T>(operation: Promise<T>, deadlineMs: number | undefined): Promise<T> {
  if (deadlineMs === undefined || deadlineMs <= 0) return operation;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StoreDeadlineError('store', undefined, {
            cause: new Error(`The data store did not answer within ${deadlineMs} ms`),
          }),
        ),
      deadlineMs,
    );
  });
  // Whatever the abandoned operation does later is no one's to handle.
  operation.catch(() => undefined);
  try {
    return await Promise.race([operation, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Shared by every repository: one collection, and driver errors translated on the way out. */
export abstract class MongoRepository<TDocument extends Document> {
  protected readonly collection: Collection<TDocument>;
  private readonly deadlineMs: number | undefined;

  protected constructor(
    db: DatabaseHandle,
    spec: CollectionSpec,
    private readonly resource: ResourceName,
    private readonly conflictMessage: string,
  ) {
    this.collection = db.collection<TDocument>(spec.name);
    this.deadlineMs = db.operationDeadlineMs;
  }

  /**
   * Runs one store operation (one or several commands) within the deadline, translating driver errors.
   * `scale` widens the deadline for operations that do several writes or a large batch.
   */
  protected async run<T>(operation: () => Promise<T>, scale = 1): Promise<T> {
    try {
      return await withDeadline(
        operation(),
        this.deadlineMs === undefined ? undefined : this.deadlineMs * scale,
      );
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

/** The ObjectId of a record copied from another store (`hortus store copy`): every store issues this form. */
export function copiedObjectId(id: string): ObjectId {
  const objectId = toObjectId(id);
  if (objectId === undefined) {
    throw new InvalidInputError(`the id ${JSON.stringify(id)} is not of the form this store keeps`, [
      { field: 'id', problem: 'must be 24 hexadecimal digits' },
    ]);
  }
  return objectId;
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

/**
 * Marks an array that stood directly inside another array. FerretDB refuses nested arrays ("nested arrays are
 * not supported"), so such an inner array is stored as `{"%A": [...]}`; the key cannot clash with a client's
 * key, since a client's `%` is always stored escaped as `%25`.
 */
const NESTED_ARRAY_KEY = '%A';

function encode(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => (Array.isArray(item) ? { [NESTED_ARRAY_KEY]: encode(item) } : encode(item)));
  }
  if (!isLiteralObject(value)) return value;
  const mapped: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) mapped[escapeKey(key)] = encode(item);
  return mapped;
}

function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (!isLiteralObject(value)) return value;
  const keys = Object.keys(value);
  const nested = value[NESTED_ARRAY_KEY];
  if (keys.length === 1 && Array.isArray(nested)) return decode(nested);
  const mapped: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) mapped[unescapeKey(key)] = decode(item);
  return mapped;
}

/** Free-form JSON (chart data, group settings) as stored: any JSON a client sent, on any MongoDB-wire server. */
export function toStoredJson(value: unknown): unknown {
  return encode(value);
}

/** Stored free-form JSON back as the client wrote it. */
export function fromStoredJson(value: unknown): unknown {
  return decode(value);
}

/**
 * One stored revision of an item that concurrent writers change: `v` counts up from 1, a unique index on
 * (item, v) lets exactly one writer store each `v`, and `parent` is the `_id` of the revision it was built on.
 * Arbitration rests on that unique index, never on the isolation of an update, so no write is lost on a
 * server whose updates are an unisolated read-modify-write (FerretDB v1) either.
 */
export interface RevisionFields {
  _id: unknown;
  v: number;
  parent?: unknown;
}

/** The current revision of an item: the one with the highest `v`. */
export function headOf<T extends RevisionFields>(revisions: readonly T[]): T | undefined {
  let head: T | undefined;
  for (const revision of revisions) if (head === undefined || revision.v > head.v) head = revision;
  return head;
}

function sameId(a: unknown, b: unknown): boolean {
  return a instanceof ObjectId && b instanceof ObjectId ? a.equals(b) : a === b;
}

/**
 * Stores `next`, built on the head of `loaded` (every stored revision of the item, read before `next` was
 * built; `next.v` is the head's `v` + 1 and `next.parent` the head's `_id`), then deletes the head. Answers
 * false when another writer came first: the caller reads again and rebuilds. `reread` reads every stored
 * revision of the item again, in one query.
 *
 * Why it is exact: a revision's parent is only deleted after the revision is stored, and a writer first
 * deletes the head's parent if that is still there. So while my parent still exists nobody has built past
 * it, and a `v` freed by such deletes can only be taken by a writer whose parent is gone. Such a stale
 * revision is never the newest and nobody builds on it; its writer finds that out and removes it.
 */
export async function writeRevision<T extends RevisionFields>(
  collection: Collection<T>,
  loaded: readonly RevisionFields[],
  next: T,
  reread: () => Promise<RevisionFields[]>,
): Promise<boolean> {
  const head = headOf(loaded);
  const grandparent = head?.parent;
  if (grandparent !== undefined && loaded.some((revision) => sameId(revision._id, grandparent))) {
    // The head's writer has not removed its parent yet (it may have stopped): do it before building on it.
    await collection.deleteOne({ _id: grandparent } as Filter<T>);
  }
  try {
    await collection.insertOne(next as OptionalUnlessRequiredId<T>);
  } catch (error) {
    if (isDuplicateKeyError(error)) return false;
    throw error;
  }
  if (head !== undefined) {
    const { deletedCount } = await collection.deleteOne({ _id: head._id } as Filter<T>);
    // My parent was still there after my revision was stored: nobody had built past it, so mine is current.
    if (deletedCount === 1) return true;
  }
  if (inChain(await reread(), next)) return true;
  await collection.deleteOne({ _id: next._id } as Filter<T>);
  return false;
}

/**
 * Whether `next`, stored after its parent was seen gone, is part of the item's chain in `revisions` (every
 * stored revision of the item, read after `next` was stored).
 */
function inChain(revisions: readonly RevisionFields[], next: RevisionFields): boolean {
  const mine = revisions.find((revision) => sameId(revision._id, next._id));
  // Gone: a writer built on mine and removed it as its parent. Newest, or built on: mine is in the chain.
  if (mine === undefined || mine.v === headOf(revisions)?.v) return true;
  return revisions.some((revision) => sameId(revision.parent, next._id));
}

/** One item's write for writeRevisions: as writeRevision's `loaded` and `next`. */
export interface RevisionWrite<T extends RevisionFields> {
  readonly loaded: readonly RevisionFields[];
  readonly next: T;
}

/**
 * writeRevision for several items at once, in four commands whatever their number (read, insert, read,
 * delete) instead of two or three per item: a batch of six readings changes twelve rollup chunks. Answers,
 * per write, whether it was stored (false: another writer came first; read again and rebuild). `reread`
 * reads every stored revision of every item in one query, answered per write in their order; `withIds`
 * makes a filter of some `_id`s.
 *
 * The same protocol as writeRevision, with one change: whether a parent was still there after my revision
 * was stored is read (the reread) rather than learnt from deleting it, since a deleteMany counts only the
 * whole. A parent seen there after mine was stored had nobody build past it, so mine is current, as when
 * writeRevision's delete finds it.
 */
export async function writeRevisions<T extends RevisionFields>(
  collection: Collection<T>,
  writes: readonly RevisionWrite<T>[],
  reread: () => Promise<(readonly RevisionFields[])[]>,
  withIds: (ids: unknown[]) => Filter<T>,
): Promise<boolean[]> {
  if (writes.length === 0) return [];
  const heads = writes.map(({ loaded }) => headOf(loaded));
  const grandparents = writes.flatMap(({ loaded }, index) => {
    const grandparent = heads[index]?.parent;
    return grandparent !== undefined && loaded.some((revision) => sameId(revision._id, grandparent))
      ? [grandparent]
      : [];
  });
  // The heads' writers have not removed their parents yet (they may have stopped): done before building on them.
  if (grandparents.length > 0) await collection.deleteMany(withIds(grandparents));
  const refused = new Set<number>();
  try {
    await collection.insertMany(
      writes.map(({ next }) => next as OptionalUnlessRequiredId<T>),
      { ordered: false },
    );
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError) || error.result.getWriteConcernError() !== undefined)
      throw error;
    const writeErrors = error.result.getWriteErrors();
    if (writeErrors.length === 0 || !writeErrors.every(isDuplicateWriteError)) throw error;
    for (const writeError of writeErrors) refused.add(writeError.index);
  }
  const stored = writes.map((_, index) => !refused.has(index));
  if (!stored.some(Boolean)) return stored;
  const afterwards = await reread();
  const parents: unknown[] = [];
  const stale: unknown[] = [];
  const outcomes = writes.map(({ next }, index) => {
    if (!stored[index]) return false;
    const revisions = afterwards[index] ?? [];
    const parent = heads[index]?._id;
    if (parent !== undefined && revisions.some((revision) => sameId(revision._id, parent))) {
      parents.push(parent);
      return true;
    }
    if (inChain(revisions, next)) return true;
    stale.push(next._id);
    return false;
  });
  const removed = [...parents, ...stale];
  if (removed.length > 0) await collection.deleteMany(withIds(removed));
  return outcomes;
}
