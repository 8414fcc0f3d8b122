import { inject, injectable } from 'inversify';
import { ATTEMPT_COUNTER, type AttemptCounter, type AttemptLimit } from '../shared/attempt-counter.port.js';
import { ThrottledError } from '../shared/errors.js';
import { ACCOUNT_SETTINGS, type AccountSettings } from './account.js';

export interface LoginAttempt {
  /** The password was wrong (or the e-mail unknown): it stays counted against the e-mail and the address. */
  failed(): Promise<void>;
  /** The password was right: the e-mail's failures are forgotten (the address keeps the others). */
  succeeded(): Promise<void>;
}

/**
 * Failed log-ins per e-mail and per client address within a window, on the ATTEMPT_COUNTER: in the
 * process on the embedded stores, in the database on MongoDB (every server on it counts together). An
 * attempt is counted as a failure when it begins, before its password is hashed, and given back when it
 * succeeds: guesses sent concurrently cannot pass the limit by being in flight together (60 at once for
 * one e-mail get 10 checks and 50 answers 429).
 */
@injectable()
export class LoginThrottle {
  private readonly byEmail: AttemptLimit;
  private readonly byAddress: AttemptLimit;

  constructor(
    @inject(ACCOUNT_SETTINGS) settings: AccountSettings,
    @inject(ATTEMPT_COUNTER) private readonly counter: AttemptCounter,
  ) {
    const allowance = { points: settings.maxFailedLogins, windowMs: settings.failedLoginWindowMs };
    this.byEmail = { name: 'login-email', ...allowance };
    this.byAddress = { name: 'login-address', ...allowance };
  }

  /** Rejects with ThrottledError when the e-mail or the address has used up its attempts; else the attempt. */
  async begin(keys: { readonly email: string; readonly address: string }): Promise<LoginAttempt> {
    const [email, address] = await Promise.all([
      this.counter.consume(this.byEmail, keys.email),
      this.counter.consume(this.byAddress, keys.address),
    ]);
    if (!email.allowed || !address.allowed) {
      // A refused attempt is never checked: the other key's count for it is given back.
      if (email.allowed) await this.counter.reward(this.byEmail, keys.email);
      if (address.allowed) await this.counter.reward(this.byAddress, keys.address);
      const wait = Math.max(
        email.allowed ? 0 : email.retryAfterSeconds,
        address.allowed ? 0 : address.retryAfterSeconds,
      );
      throw new ThrottledError('Too many failed log-ins, try again later', wait);
    }
    return {
      failed: () => Promise.resolve(),
      succeeded: async () => {
        await Promise.all([
          this.counter.forget(this.byEmail, keys.email),
          this.counter.reward(this.byAddress, keys.address),
        ]);
      },
    };
  }
}
