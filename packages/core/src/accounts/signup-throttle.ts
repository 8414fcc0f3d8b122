import { inject, injectable } from 'inversify';
import {
  ATTEMPT_COUNTER,
  type AttemptCounter,
  type AttemptDecision,
  type AttemptLimit,
} from '../shared/attempt-counter.port.js';
import { ThrottledError } from '../shared/errors.js';
import { ACCOUNT_SETTINGS, type AccountSettings } from './account.js';

/** The one key of the total limit (every address together). */
const ALL = 'all';

/**
 * Sign-ups per client address and from all addresses together within a window, counted before the
 * password is hashed: 40 sign-ups sent at once used to be 40 bcrypt hashes ahead of every log-in. Each
 * one that passes is counted, whatever its outcome after (it cost its hash). The counts are on the
 * ATTEMPT_COUNTER: in the process on the embedded stores, in the database on MongoDB.
 */
@injectable()
export class SignUpThrottle {
  private readonly byAddress: AttemptLimit;
  private readonly total: AttemptLimit;

  constructor(
    @inject(ACCOUNT_SETTINGS) private readonly settings: AccountSettings,
    @inject(ATTEMPT_COUNTER) private readonly counter: AttemptCounter,
  ) {
    const windowMs = settings.signupWindowMs;
    this.byAddress = { name: 'signup-address', points: settings.maxSignupsPerAddress, windowMs };
    this.total = { name: 'signup-total', points: settings.maxSignups, windowMs };
  }

  /** Rejects with ThrottledError when the address or the server has used up its sign-ups; else counts this one. */
  async take(address: string): Promise<void> {
    // A limit of 0 is no limit: nothing is counted for it.
    const allowed: AttemptDecision = { allowed: true, remaining: Number.POSITIVE_INFINITY };
    const [mine, all] = await Promise.all([
      this.settings.maxSignupsPerAddress === 0 ? allowed : this.counter.consume(this.byAddress, address),
      this.settings.maxSignups === 0 ? allowed : this.counter.consume(this.total, ALL),
    ]);
    if (mine.allowed && all.allowed) return;
    // A refused sign-up is not made: the other limit's count for it is given back.
    if (mine.allowed && this.settings.maxSignupsPerAddress !== 0)
      await this.counter.reward(this.byAddress, address);
    if (all.allowed && this.settings.maxSignups !== 0) await this.counter.reward(this.total, ALL);
    const wait = Math.max(mine.allowed ? 0 : mine.retryAfterSeconds, all.allowed ? 0 : all.retryAfterSeconds);
    throw new ThrottledError('Too many sign-ups, try again later', wait);
  }
}
