import {
  type ApplyRetention,
  type DeliverAlertMessages,
  type DeliveryRound,
  isDomainError,
  type Logger,
  type ScheduledTask,
  type Scheduler,
} from '@hortus/core';

function failureFields(error: unknown): Record<string, unknown> {
  const cause = error instanceof Error ? error : new Error(String(error));
  return {
    error: cause.message,
    ...(isDomainError(error) ? { code: error.code } : {}),
    ...(cause.stack === undefined ? {} : { stack: cause.stack }),
  };
}

/**
 * The core's Scheduler on real timers. A tick that comes while the previous run is still busy is skipped,
 * so runs of one task never overlap; a failing run is logged and the next tick runs as usual. Timers are
 * unref'd: background work never keeps the process alive.
 */
export class IntervalScheduler implements Scheduler {
  constructor(private readonly logger: Logger) {}

  /** After the I/O that waits: requests that arrived meanwhile are answered first. */
  pause(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  every(intervalMs: number, task: () => Promise<void>): ScheduledTask {
    let running: Promise<void> | undefined;
    let stopped = false;
    const run = (): void => {
      if (stopped || running !== undefined) return;
      running = (async () => {
        try {
          await task();
        } catch (error) {
          // A domain error (the store is away) is expected weather; anything else is a bug.
          const level = isDomainError(error) ? 'warn' : 'error';
          this.logger[level]('scheduled task failed', { intervalMs, ...failureFields(error) });
        } finally {
          running = undefined;
        }
      })();
    };
    const timer = setInterval(run, intervalMs);
    timer.unref();
    return {
      stop: async () => {
        stopped = true;
        clearInterval(timer);
        await running;
      },
    };
  }
}

/**
 * Works the alert outbox on a timer. A tick does not wait for the rounds before it to end: a receiver that
 * hangs holds back only its own destination's lane, and the use case bounds the messages in flight.
 */
export function startAlertDelivery(
  scheduler: Scheduler,
  delivery: Pick<DeliverAlertMessages, 'execute' | 'idle'>,
  logger: Logger,
  intervalMs: number,
  report: (round: DeliveryRound) => void,
): ScheduledTask {
  const timer = scheduler.every(intervalMs, async () => {
    void delivery.execute().then(report, (error: unknown) => {
      logger[isDomainError(error) ? 'warn' : 'error']('alert delivery round failed', failureFields(error));
    });
  });
  return {
    stop: async () => {
      await timer.stop();
      await delivery.idle();
    },
  };
}

/** What the keeper needs of the MQTT bridge: start() rejects and leaves nothing running on failure. */
export interface StartableBridge {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Pause between two start attempts while the broker cannot be reached. */
export const MQTT_RETRY_MS = 10_000;

/**
 * Runs the MQTT bridge beside the HTTP server without ever holding the server up: the start happens in the
 * background, and a start that fails (broker down or refusing) is retried every `retryMs` until it succeeds
 * or the server closes. Once started, the bridge reconnects by itself.
 */
export class MqttBridgeKeeper {
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(
    private readonly bridge: StartableBridge,
    private readonly logger: Logger,
    private readonly retryMs = MQTT_RETRY_MS,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.bridge.start().then(
      () => {
        if (this.failures > 0) this.logger.info('mqtt bridge started', { failedAttempts: this.failures });
      },
      (error: unknown) => {
        // A start cut short by stop() is no failure worth a retry.
        if (this.stopped) return;
        this.failures += 1;
        this.logger.warn('mqtt bridge not started, HTTP keeps serving', {
          attempt: this.failures,
          retryInMs: this.retryMs,
          error: error instanceof Error ? error.message : String(error),
        });
        this.retryTimer = setTimeout(() => this.start(), this.retryMs);
        this.retryTimer.unref();
      },
    );
  }

  /**
   * Stops retrying and stops the bridge, storing what it has queued. A start still waiting for the broker
   * is cut off by the bridge's stop (it closes the connection), so this does not wait for its deadline.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.bridge.stop();
  }
}

/** How often retention runs once the server is up, and how long after the start its first pass begins. */
export const RETENTION_INTERVAL_MS = 3_600_000;
export const RETENTION_FIRST_RUN_MS = 1000;
/** Pause between two delete batches, so requests and ingest get the store in between (see bench/purge.mjs). */
export const RETENTION_PAUSE_MS = 20;

const interrupted = new Error('retention interrupted by shutdown');

/**
 * Runs the core's ApplyRetention in the background: a first pass shortly after the start, then one every
 * interval, never two at once. Each pass deletes in small batches with a pause between them and logs how
 * many readings (per group) and summaries it deleted; a shutdown ends a pass at its next pause.
 */
export class RetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly retention: ApplyRetention,
    private readonly logger: Logger,
    private readonly intervalMs = RETENTION_INTERVAL_MS,
    private readonly pauseMs = RETENTION_PAUSE_MS,
  ) {}

  start(firstRunMs = RETENTION_FIRST_RUN_MS): void {
    this.schedule(firstRunMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass; resolves when it is done (errors are logged, not thrown). */
  async runOnce(): Promise<void> {
    const startedAt = Date.now();
    try {
      if (!(await this.retention.configured())) return;
      const { readings, summaries } = await this.retention.execute(() => this.pause());
      const deleted = Object.values(readings).reduce((sum, count) => sum + count, 0);
      this.logger.info('retention purge', {
        deleted,
        groups: readings,
        summaries,
        ms: Date.now() - startedAt,
      });
    } catch (error) {
      if (error === interrupted) {
        this.logger.info('retention purge interrupted', { ms: Date.now() - startedAt });
        return;
      }
      const level = isDomainError(error) ? 'warn' : 'error';
      this.logger[level]('retention purge failed', failureFields(error));
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce().finally(() => {
        this.running = undefined;
        this.schedule(this.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private pause(): Promise<void> {
    if (this.stopped) return Promise.reject(interrupted);
    return new Promise((resolve) => setTimeout(resolve, this.pauseMs));
  }
}
