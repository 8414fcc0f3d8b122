import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ThrottledError } from '../shared/errors.js';
import { ACCOUNT_SETTINGS, type AccountSettings } from './account.js';

/** Bounds the memory a scan of many addresses or e-mails can take; the oldest entries go first. */
const MAX_TRACKED_KEYS = 50_000;

export interface LoginAttempt {
  /** The password was wrong (or the e-mail unknown): counts against the e-mail and the address. */
  failed(): void;
  /** The password was right: the e-mail's failures are forgotten (the address keeps its count). */
  succeeded(): void;
}

/**
 * Failed log-ins per key (an e-mail, a client address) within a sliding window. An attempt is counted as
 * a failure when it begins, before its password is hashed, and given back when it succeeds: guesses sent
 * concurrently cannot pass the limit by being in flight together (60 at once for one e-mail get 10
 * checks and 50 answers 429). People logging in at once behind one address are refused only while more
 * than the limit are in flight. The counts live in this process: each server of several counts on its own.
 */
@injectable()
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    @inject(ACCOUNT_SETTINGS) private readonly settings: AccountSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Throws ThrottledError when the e-mail or the address has used up its attempts; else the attempt. */
  begin(keys: { readonly email: string; readonly address: string }): LoginAttempt {
    const now = this.clock.now().getTime();
    const email = `email:${keys.email}`;
    const names = [email, `address:${keys.address}`];
    const wait = Math.max(...names.map((name) => this.waitSeconds(name, now)));
    if (wait > 0) throw new ThrottledError('Too many failed log-ins, try again later', wait);
    // Reserved now, before the slow hash: it stays a failure unless the attempt succeeds.
    for (const name of names) this.record(name, now);
    return {
      failed: () => undefined,
      succeeded: () => {
        this.failures.delete(email);
        this.release(names[1] ?? '', now);
      },
    };
  }

  /** Gives back one reserved attempt of a key. */
  private release(name: string, at: number): void {
    const times = this.failures.get(name);
    const index = times?.lastIndexOf(at) ?? -1;
    if (times === undefined || index < 0) return;
    times.splice(index, 1);
    if (times.length === 0) this.failures.delete(name);
  }

  private waitSeconds(name: string, now: number): number {
    const times = this.failures.get(name);
    if (times === undefined) return 0;
    const windowStart = now - this.settings.failedLoginWindowMs;
    while (times.length > 0 && (times[0] ?? 0) <= windowStart) times.shift();
    if (times.length === 0) {
      this.failures.delete(name);
      return 0;
    }
    if (times.length < this.settings.maxFailedLogins) return 0;
    // The oldest failure in the window leaves it first; then one more attempt is allowed.
    const oldest = times[times.length - this.settings.maxFailedLogins] ?? now;
    return Math.max(1, Math.ceil((oldest + this.settings.failedLoginWindowMs - now) / 1000));
  }

  private record(name: string, now: number): void {
    const times = this.failures.get(name);
    if (times !== undefined) {
      times.push(now);
      // Only the newest failures matter for the decision.
      if (times.length > this.settings.maxFailedLogins * 2)
        times.splice(0, times.length - this.settings.maxFailedLogins);
      return;
    }
    if (this.failures.size >= MAX_TRACKED_KEYS) this.failures.delete(this.failures.keys().next().value ?? '');
    this.failures.set(name, [now]);
  }
}
