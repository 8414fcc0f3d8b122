import { type Logger } from '@hortus/core';

/**
 * Lets one warning per event through per interval: a flood of bad messages must not become a flood of log
 * lines. The ones held back are counted and reported (`suppressed`) with the next one let through.
 */
export class WarningGate {
  private readonly shown = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  warn(event: string, fields: Readonly<Record<string, unknown>>, level: 'warn' | 'error' = 'warn'): void {
    const at = this.now();
    const last = this.shown.get(event);
    if (last !== undefined && at - last.at < this.intervalMs) {
      last.suppressed += 1;
      return;
    }
    this.shown.set(event, { at, suppressed: 0 });
    const suppressed = last?.suppressed ?? 0;
    this.log[level](event, suppressed > 0 ? { ...fields, suppressed } : fields);
  }
}
