/** Stable codes that transports map to statuses and exit codes; never rename one. */
export const errorCodes = [
  'NOT_FOUND',
  'CONFLICT',
  'INVALID_INPUT',
  'UNAVAILABLE',
  'UPSTREAM_FAILED',
  'QUOTA_EXCEEDED',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'THROTTLED',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export type ResourceName =
  | 'reading'
  | 'action'
  | 'device'
  | 'notification'
  | 'history-chart'
  | 'group'
  | 'user'
  | 'commits'
  | 'access-key'
  | 'firmware'
  | 'audit';

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class NotFoundError extends DomainError {
  readonly code = 'NOT_FOUND';

  constructor(
    readonly resource: ResourceName,
    message: string,
  ) {
    super(message);
  }
}

export class ConflictError extends DomainError {
  readonly code = 'CONFLICT';

  constructor(
    readonly resource: ResourceName,
    message: string,
  ) {
    super(message);
  }
}

export interface InvalidField {
  readonly field: string;
  readonly problem: string;
}

export class InvalidInputError extends DomainError {
  readonly code = 'INVALID_INPUT';

  constructor(
    message: string,
    readonly fields: readonly InvalidField[] = [],
  ) {
    super(message);
  }

  static forField(field: string, problem: string): InvalidInputError {
    return new InvalidInputError(`${field} ${problem}`, [{ field, problem }]);
  }
}

/** A limit on stored data (topics, devices, charts, open notifications per group or user) is reached. */
export class QuotaExceededError extends DomainError {
  readonly code = 'QUOTA_EXCEEDED';

  constructor(
    readonly resource: ResourceName,
    readonly limit: number,
    message: string,
  ) {
    super(message);
  }
}

/** The store cannot be reached right now; the request may succeed later. */
export class StoreUnavailableError extends DomainError {
  readonly code = 'UNAVAILABLE';

  constructor(message = 'The data store is unavailable, try again shortly', options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Which wait ran out: `store`, one store operation's (MONGODB_TIMEOUT_MS); `answer`, a request's wait for a
 * cacheable answer being built (ANSWER_WAIT_MS).
 */
export type DeadlineKind = 'store' | 'answer';

/** The store did not answer within its deadline: unavailable to the caller (503), and counted apart. */
export class StoreDeadlineError extends StoreUnavailableError {
  constructor(
    readonly deadline: DeadlineKind,
    message?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A service Hortus depends on (the code host) failed and no fallback was available. */
export class UpstreamError extends DomainError {
  readonly code = 'UPSTREAM_FAILED';
}

/** No credential, or one that is not valid (malformed, expired, forged, of a deleted user, wrong password). */
export class UnauthenticatedError extends DomainError {
  readonly code = 'UNAUTHENTICATED';

  constructor(
    message: string,
    /** A credential was sent but refused (as opposed to none sent): transports say so to the client. */
    readonly invalidCredential = false,
  ) {
    super(message);
  }
}

/** The caller is known but may not do this. */
export class ForbiddenError extends DomainError {
  readonly code = 'FORBIDDEN';
}

/** Too many failed attempts: the caller must wait `retryAfterSeconds` before trying again. */
export class ThrottledError extends DomainError {
  readonly code = 'THROTTLED';

  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
