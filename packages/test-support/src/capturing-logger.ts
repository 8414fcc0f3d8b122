import { type Logger } from '@hortus/core';

/** Like the application's logger: a field named like a fixed key is kept as `<name>Field`. */
function keepFixedKeys(fields: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    kept[key === 'level' || key === 'event' || key === 'time' ? `${key}Field` : key] = value;
  }
  return kept;
}

/** A Logger that keeps every line, for tests that assert on what was logged. */
export class CapturingLogger implements Logger {
  readonly lines: { level: string; event: string; [field: string]: unknown }[] = [];
  info(event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'info', event, ...keepFixedKeys(fields) });
  }
  warn(event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'warn', event, ...keepFixedKeys(fields) });
  }
  error(event: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level: 'error', event, ...keepFixedKeys(fields) });
  }
}
