import { ThrottledError } from '@hortus/core';

/**
 * Which password work waits behind which: `urgent` (log-in and every other check a person waits for)
 * always goes before `deferrable` (sign-up, where a burst of strangers must not hold up log-ins).
 */
export const hashPriorities = ['urgent', 'deferrable'] as const;
export type HashPriority = (typeof hashPriorities)[number];

export interface HashQueueLimits {
  /** Jobs run at once (the hashing threads). */
  readonly concurrency: number;
  /** Jobs that may wait per priority; beyond that a job is refused at once with ThrottledError. */
  readonly maxWaiting: Readonly<Record<HashPriority, number>>;
}

export const defaultMaxWaiting: Readonly<Record<HashPriority, number>> = { urgent: 256, deferrable: 8 };

interface Waiting {
  start(): void;
}

/**
 * A bounded queue in front of the hashing threads: at most `concurrency` jobs run, the rest wait in two
 * lines, and a free slot always takes the oldest urgent job before any deferrable one. Without it every job
 * went straight to a thread's own first-come queue, so 40 sign-ups sent together made a log-in behind them
 * wait 27 s. A full line refuses new jobs (429) instead of growing without bound.
 */
export class HashQueue {
  private running = 0;
  private readonly lines: Record<HashPriority, Waiting[]> = { urgent: [], deferrable: [] };

  constructor(private readonly limits: HashQueueLimits) {
    if (!Number.isInteger(limits.concurrency) || limits.concurrency < 1) {
      throw new RangeError(`concurrency must be a whole number of at least 1, got ${limits.concurrency}`);
    }
  }

  /** Jobs waiting for a slot, per priority (for tests and metrics). */
  waiting(priority: HashPriority): number {
    return this.lines[priority].length;
  }

  /** Runs `job` when a slot is free and its turn has come; rejects at once when its line is full. */
  run<T>(priority: HashPriority, job: () => Promise<T>): Promise<T> {
    // A free slot means no one waits: a finishing job hands its slot to the next waiting one at once.
    if (this.running < this.limits.concurrency) return this.start(job);
    const line = this.lines[priority];
    if (line.length >= this.limits.maxWaiting[priority]) {
      return Promise.reject(
        new ThrottledError(
          priority === 'urgent'
            ? 'The server is checking too many passwords at once, try again later'
            : 'Too many sign-ups at once, try again later',
          priority === 'urgent' ? 1 : 5,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      line.push({ start: () => void this.start(job).then(resolve, reject) });
    });
  }

  private async start<T>(job: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await job();
    } finally {
      this.running -= 1;
      (this.lines.urgent.shift() ?? this.lines.deferrable.shift())?.start();
    }
  }
}
