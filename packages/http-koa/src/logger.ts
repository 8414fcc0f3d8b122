import { type LogFields, type Logger } from '@hortus/core';

/** Warnings about client faults per minute at most; the rest are counted and reported once a minute. */
export const CLIENT_FAULT_LINES_PER_MINUTE = 20;

/**
 * Warnings caused by what clients send (broken framing, aborted or undecodable bodies, stalled uploads):
 * anyone can cause them at will, so they are warnings, never errors, and at most `perMinute` are written;
 * the first fault after a quiet minute reports how many were left out.
 */
export class ClientFaultLog {
  private windowStarted = Number.NEGATIVE_INFINITY;
  private written = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly perMinute = CLIENT_FAULT_LINES_PER_MINUTE,
    private readonly now: () => number = () => performance.now(),
  ) {}

  warn(event: string, fields: LogFields = {}): void {
    const now = this.now();
    if (now - this.windowStarted >= 60_000) {
      if (this.suppressed > 0) this.logger.warn('client faults not logged', { count: this.suppressed });
      this.windowStarted = now;
      this.written = 0;
      this.suppressed = 0;
    }
    if (this.written >= this.perMinute) {
      this.suppressed += 1;
      return;
    }
    this.written += 1;
    this.logger.warn(event, fields);
  }
}
