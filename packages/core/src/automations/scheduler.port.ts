export interface ScheduledTask {
  /** Stops future runs and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

/** Runs work periodically; the transport binds real timers, tests drive ticks by hand. */
export interface Scheduler {
  /** Runs `task` every `intervalMs`, never two runs of it at once. */
  every(intervalMs: number, task: () => Promise<void>): ScheduledTask;
  /**
   * Lets other work run (the transport's requests) before a long task goes on with its next piece: on a
   * store that answers synchronously, a tick over hundreds of groups would otherwise hold every request
   * for its whole length. Absent: the task goes on at once.
   */
  pause?(): Promise<void>;
}

export const SCHEDULER = Symbol.for('hortus.Scheduler');
