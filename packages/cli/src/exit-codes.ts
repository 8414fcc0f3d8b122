import { ConfigError, type ErrorCode, isDomainError } from '@hortus/core';
import { CommanderError } from 'commander';

/** Exit codes of every hortus command; scripts rely on them, so never renumber one. */
export const exitCodes = {
  ok: 0,
  unexpected: 1,
  /** Wrong arguments, invalid input, or a missing configuration such as MONGODB_URI. */
  usage: 2,
  notFound: 3,
  conflict: 4,
  /** The store (or another service) cannot be reached, or the command was interrupted; trying again later may succeed. */
  unavailable: 5,
  /** A limit on stored data (topics, devices, charts, open notifications) is reached. */
  quotaExceeded: 6,
  /** Refused: a credential is missing or wrong, or the caller may not do this. */
  refused: 7,
} as const;
export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

const exitCodeOfDomainError: Record<ErrorCode, ExitCode> = {
  INVALID_INPUT: exitCodes.usage,
  NOT_FOUND: exitCodes.notFound,
  CONFLICT: exitCodes.conflict,
  UNAVAILABLE: exitCodes.unavailable,
  UPSTREAM_FAILED: exitCodes.unavailable,
  QUOTA_EXCEEDED: exitCodes.quotaExceeded,
  UNAUTHENTICATED: exitCodes.refused,
  FORBIDDEN: exitCodes.refused,
  THROTTLED: exitCodes.unavailable,
};

/** A mistake in how hortus was called or configured, found by the CLI itself rather than the core. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A long command stopped on request (Ctrl-C) before it was done; running it again resumes it. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

export interface Failure {
  readonly exitCode: ExitCode;
  /** The core's error code, `USAGE` for CLI usage errors, `UNEXPECTED` otherwise. */
  readonly code: ErrorCode | 'USAGE' | 'INTERRUPTED' | 'UNEXPECTED';
  readonly message: string;
  /** Commander has already printed its own message (or the help text). */
  readonly reported: boolean;
}

/** The one place that turns any error a command throws into an exit code and a message. */
export function describeFailure(error: unknown): Failure {
  if (isDomainError(error)) {
    return {
      exitCode: exitCodeOfDomainError[error.code],
      code: error.code,
      message: error.message,
      reported: false,
    };
  }
  if (error instanceof UsageError || error instanceof ConfigError) {
    return { exitCode: exitCodes.usage, code: 'USAGE', message: error.message, reported: false };
  }
  if (error instanceof Interrupted) {
    return { exitCode: exitCodes.unavailable, code: 'INTERRUPTED', message: error.message, reported: false };
  }
  if (error instanceof CommanderError) {
    // Help and --version end parsing through this error too, with exit code 0.
    const exitCode = error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    return { exitCode, code: 'USAGE', message: error.message, reported: true };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    exitCode: exitCodes.unexpected,
    code: 'UNEXPECTED',
    message: `unexpected error: ${message}`,
    reported: false,
  };
}
