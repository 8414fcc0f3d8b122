export interface ScheduledTask {
  /** Stops future runs and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

/** Runs work periodically; the transport binds real timers, tests drive ticks by hand. */
export interface Scheduler {
  /** Runs `task` every `intervalMs`, never two runs of it at once. */
  every(intervalMs: number, task: () => Promise<void>): ScheduledTask;
}

export const SCHEDULER = Symbol.for('hortus.Scheduler');
