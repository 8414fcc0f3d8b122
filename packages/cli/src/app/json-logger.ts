import { type LogFields, type Logger, type LogLevel, logLevels } from '@hortus/core';

/** Lines held back before they are written at once, whatever the turn of the event loop is doing. */
const MAX_BATCHED_LINES = 1000;
/**
 * How long a line may wait for others to go out with it. A write per turn of the event loop still cost a
 * sixth of a 304 poll's CPU (a busy server turns once or twice per request); every 20 ms, one write carries
 * dozens of lines, and a person reading the log cannot tell the delay.
 */
const FLUSH_AFTER_MS = 20;

/** Loggers holding lines; the process writes them out on exit (writes to stdout are synchronous then). */
const pending = new Set<{ flush(): void }>();
let flushOnExit = false;

function writePendingLines(): void {
  for (const logger of [...pending]) logger.flush();
}

/** The keys every line starts with; a field cannot take their place. */
const FIXED_KEYS: ReadonlySet<string> = new Set(['time', 'level', 'event']);

/**
 * A field named like a fixed key (an alert's `event`, say) is written as `<name>Field`, so the line keeps its
 * event name, which operators search for, and the field's value is kept too.
 */
export function keepFixedKeys(fields: LogFields): LogFields {
  if (!('time' in fields || 'level' in fields || 'event' in fields)) return fields;
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields))
    renamed[FIXED_KEYS.has(key) ? `${key}Field` : key] = value;
  return renamed;
}

export type LogFormat = 'json' | 'text';

/** A field's value for people: bare when it reads unambiguously, else as JSON. */
function textValue(value: unknown): string {
  // Printable ASCII without space, quote or '=': anything else (a control a client stored) goes out escaped.
  if (typeof value === 'string' && /^[!#-<>-~]+$/u.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** `09:00:04.089 info  request method=GET path=/api/... status=200 ms=1.2`: a line for a terminal. */
function textLine(date: Date, level: LogLevel, event: string, fields: LogFields | undefined): string {
  const rest =
    fields === undefined
      ? ''
      : Object.entries(keepFixedKeys(fields))
          .filter(([, value]) => value !== undefined)
          .map(([key, value]) => ` ${key}=${textValue(value)}`)
          .join('');
  return `${date.toISOString().slice(11, 23)} ${level.padEnd(5)} ${event}${rest}\n`;
}

/**
 * One JSON line per event (or with `format` text, one line for people). Lines go to `write` together, in one
 * call at most FLUSH_AFTER_MS after the first of them (a busy server otherwise pays a system call per
 * request); `flush()` and the process's exit write whatever is held back.
 */
export function createJsonLogger(
  write: (line: string) => void = (line) => process.stdout.write(line),
  now: () => Date = () => new Date(),
  minLevel: LogLevel = 'info',
  format: LogFormat = 'json',
): Logger {
  const least = logLevels.indexOf(minLevel);
  // A busy server writes many lines within one millisecond: their time is formatted once.
  let lastMs = Number.NaN;
  let lastTime = '';
  let lines = '';
  let count = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    pending.delete(batch);
    if (count === 0) return;
    const text = lines;
    lines = '';
    count = 0;
    write(text);
  };
  const batch = { flush };
  const log = (level: LogLevel, event: string, fields?: LogFields): void => {
    if (logLevels.indexOf(level) < least) return;
    const date = now();
    if (format === 'text') {
      append(textLine(date, level, event, fields));
      return;
    }
    const ms = date.getTime();
    if (ms !== lastMs) {
      lastMs = ms;
      lastTime = date.toISOString();
    }
    const time = lastTime;
    // The same text as JSON.stringify({ time, level, event, ...fields }), without building that object.
    const head = `{"time":"${time}","level":"${level}","event":${JSON.stringify(event)}`;
    let line: string;
    if (fields === undefined) line = `${head}}\n`;
    else {
      const rest = JSON.stringify(keepFixedKeys(fields));
      line = rest === '{}' ? `${head}}\n` : `${head},${rest.slice(1)}\n`;
    }
    append(line);
  };
  const append = (line: string): void => {
    lines += line;
    count += 1;
    if (count >= MAX_BATCHED_LINES) {
      flush();
      return;
    }
    if (!scheduled) {
      scheduled = true;
      pending.add(batch);
      if (!flushOnExit) {
        flushOnExit = true;
        process.once('exit', writePendingLines);
      }
      setTimeout(flush, FLUSH_AFTER_MS).unref();
    }
  };
  return {
    debug: (event, fields) => log('debug', event, fields),
    info: (event, fields) => log('info', event, fields),
    warn: (event, fields) => log('warn', event, fields),
    error: (event, fields) => log('error', event, fields),
    flush,
  };
}
