/** From the most to the least verbose; LOG_LEVEL names the least severe one that is written. */
export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Structured logging, one port for every part (HTTP, MQTT, mail, the scheduler and the engine, the CLI):
 * every event is a name and fields, written as one JSON line by the composition root's logger.
 */
export interface Logger {
  /** Optional so that small loggers (tests, adapters) need not have it. */
  debug?(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  /** Writes the lines held back so far (a logger may batch them per turn of the event loop). */
  flush?(): void;
  /**
   * The `request` event at info level, the line a server writes per request: optional, for a logger that
   * writes these fixed fields faster than any event's; the same line as `info('request', line)`.
   */
  request?(line: RequestLogLine): void;
}

/** The fields of the `request` event, in the order they are written (a type, so that it is LogFields too). */
export type RequestLogLine = {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ms: number;
  /** The access key's id (never its secret); absent without one. */
  readonly keyId?: string;
};

export const LOGGER = Symbol.for('hortus.Logger');

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
