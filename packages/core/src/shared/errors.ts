/** Stable codes that transports map to statuses and exit codes; never rename one. */
export const errorCodes = [
  'NOT_FOUND',
  'CONFLICT',
  'INVALID_INPUT',
  'UNAVAILABLE',
  'UPSTREAM_FAILED',
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
  | 'access-key';

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

/** The store cannot be reached right now; the request may succeed later. */
export class StoreUnavailableError extends DomainError {
  readonly code = 'UNAVAILABLE';

  constructor(message = 'The data store is unavailable, try again shortly', options?: ErrorOptions) {
    super(message, options);
  }
}

/** A service Hortus depends on (the code host) failed and no fallback was available. */
export class UpstreamError extends DomainError {
  readonly code = 'UPSTREAM_FAILED';
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
