/** One kind of counted attempt: at most `points` per key within a window of `windowMs`. */
export interface AttemptLimit {
  /** Keeps the keys of different limits apart (`login-email`, `signup-address`, ...). */
  readonly name: string;
  readonly points: number;
  readonly windowMs: number;
}

export type AttemptDecision =
  | { readonly allowed: true; readonly remaining: number }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * Counts attempts per key in fixed windows: a key's window starts with its first attempt and its count
 * starts again once the window has passed. Where the counts live decides what they cover: the in-process
 * counter counts one server; a store's counter (MongoDB) counts every server on that store together.
 */
export interface AttemptCounter {
  /** Counts one attempt (refused ones too: they do not move the window's end) and answers whether it is within the limit. */
  consume(limit: AttemptLimit, key: string): Promise<AttemptDecision>;
  /** Gives back one counted attempt: it turned out not to count (a log-in that succeeded). */
  reward(limit: AttemptLimit, key: string): Promise<void>;
  /** Forgets the key's attempts of this limit. */
  forget(limit: AttemptLimit, key: string): Promise<void>;
}

export const ATTEMPT_COUNTER = Symbol.for('hortus.AttemptCounter');

/** Whole seconds until a window of `msLeft` has passed, at least 1 (a Retry-After of 0 invites a retry now). */
export function retryAfterSeconds(msLeft: number): number {
  return Math.max(1, Math.ceil(msLeft / 1000));
}
