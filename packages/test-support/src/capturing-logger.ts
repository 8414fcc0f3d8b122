import { type Logger } from '@hortus/core';

/** A Logger that keeps every line, for tests that assert on what was logged. */
export class CapturingLogger implements Logger {
  readonly lines: { level: string; event: string; [field: string]: unknown }[] = [];
  info(event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'info', event, ...fields });
  }
  warn(event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'warn', event, ...fields });
  }
  error(event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'error', event, ...fields });
  }
}
