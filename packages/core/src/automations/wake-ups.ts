/**
 * Collects when a group must be evaluated again although nothing in it changes: its next time slot, its
 * no-data deadline, the end of a wait (a switch interval, an alert's reopen interval). The engine keeps the
 * earliest in its schedule; between changes and wake-ups the group is not read at all.
 */
export class WakeUps {
  private earliestAt = Number.POSITIVE_INFINITY;

  /** Asks to be evaluated again at `at` (milliseconds since the epoch) at the latest. */
  at(at: number): void {
    if (at < this.earliestAt) this.earliestAt = at;
  }

  /** The earliest time asked for; undefined when none was (the group waits for a change). */
  get earliest(): number | undefined {
    return Number.isFinite(this.earliestAt) ? this.earliestAt : undefined;
  }
}
