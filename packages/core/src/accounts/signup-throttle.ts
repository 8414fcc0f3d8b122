import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ThrottledError } from '../shared/errors.js';
import { ACCOUNT_SETTINGS, type AccountSettings } from './account.js';

/** Bounds the memory a sign-up from many addresses can take; the oldest addresses go first. */
const MAX_TRACKED_ADDRESSES = 50_000;

/**
 * Sign-ups per client address and from all addresses together within a sliding window, counted before
 * the password is hashed: 40 sign-ups sent at once used to be 40 bcrypt hashes ahead of every log-in.
 * Each one that passes is counted, whatever its outcome after (it cost its hash). The counts live in
 * this process: each server of several counts on its own.
 */
@injectable()
export class SignUpThrottle {
  private readonly byAddress = new Map<string, number[]>();
  private readonly all: number[] = [];

  constructor(
    @inject(ACCOUNT_SETTINGS) private readonly settings: AccountSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Throws ThrottledError when the address or the server has used up its sign-ups; else counts this one. */
  take(address: string): void {
    const now = this.clock.now().getTime();
    const times = this.byAddress.get(address) ?? [];
    const wait = Math.max(
      this.waitSeconds(times, this.settings.maxSignupsPerAddress, now),
      this.waitSeconds(this.all, this.settings.maxSignups, now),
    );
    if (wait > 0) throw new ThrottledError('Too many sign-ups, try again later', wait);
    times.push(now);
    this.all.push(now);
    if (!this.byAddress.has(address)) {
      if (this.byAddress.size >= MAX_TRACKED_ADDRESSES) {
        this.byAddress.delete(this.byAddress.keys().next().value ?? '');
      }
      this.byAddress.set(address, times);
    }
  }

  /** Drops the times that left the window; answers how long until one more is allowed (0: now). */
  private waitSeconds(times: number[], limit: number, now: number): number {
    const windowStart = now - this.settings.signupWindowMs;
    while (times.length > 0 && (times[0] ?? 0) <= windowStart) times.shift();
    if (limit === 0 || times.length < limit) return 0;
    const oldest = times[times.length - limit] ?? now;
    return Math.max(1, Math.ceil((oldest + this.settings.signupWindowMs - now) / 1000));
  }
}
