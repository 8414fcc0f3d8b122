import { AsyncLocalStorage } from 'node:async_hooks';
import { DEFAULT_TIME_ZONE, formatLocalTime, isValidTimeZone } from '@hortus/core';

/** What the CLI writes to: process.stdout / process.stderr, or a capturing stream in tests. */
export interface TextSink {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Prints a command's result: JSON for scripts with `--json`, text for people otherwise. */
export class Output {
  constructor(
    private readonly stdout: TextSink,
    readonly json: boolean,
  ) {}

  result<T>(value: T, forPeople: (value: T) => string): void {
    const text = this.json ? JSON.stringify(value, null, 2) : forPeople(value);
    this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}

// C0 controls (CR and LF forge rows, ESC starts terminal sequences), DEL, C1 controls (0x9B is a one-byte
// CSI), line and paragraph separators, and the bidirectional overrides that reorder what a reader sees.
const unprintable = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
const namedEscapes: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text a client stored, made safe to print on a terminal: every control character becomes a visible
 * escape (`\n`, `\u001b`), so stored values can neither run terminal sequences (set the title, clear the
 * screen) nor start a line of their own. `--json` output needs none of this: JSON escapes them already.
 */
export function printable(text: string): string {
  return text.replace(
    unprintable,
    (char) => namedEscapes[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The zone one run of the CLI shows times in; a run's own, so two runs in one process do not mix. */
const displayZones = new AsyncLocalStorage<{ timeZone: string }>();

/** Runs one CLI invocation with its display zone, set (from TIME_ZONE) by `showTimesIn` once it is known. */
export function withDisplayZone<T>(work: () => Promise<T>): Promise<T> {
  return displayZones.run({ timeZone: DEFAULT_TIME_ZONE }, work);
}

/**
 * Times people read are shown in the configured zone (TIME_ZONE, like time rules): an invalid one is
 * reported by the commands that read the configuration, and meanwhile shown as UTC.
 */
export function showTimesIn(timeZone: string | undefined): void {
  const store = displayZones.getStore();
  if (store === undefined) return;
  const given = timeZone?.trim() ?? '';
  store.timeZone = given === '' ? DEFAULT_TIME_ZONE : isValidTimeZone(given) ? given : 'UTC';
}

/**
 * An instant as people read it: local time in the run's zone, with the zone's name or offset
 * ("2026-11-29 14:05:03 CET"). `--json` keeps ISO-8601 UTC: it never comes here.
 */
export function localTime(instant: Date): string {
  return formatLocalTime(instant, displayZones.getStore()?.timeZone ?? DEFAULT_TIME_ZONE);
}

/** One cell as people read it: dates in local time, structured values as compact JSON, controls escaped. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Date) return localTime(value);
  if (typeof value === 'object') return printable(JSON.stringify(value));
  return printable(String(value));
}

/** A template for sentences shown to people: every interpolated value goes through cell(). */
export function say(strings: TemplateStringsArray, ...values: readonly unknown[]): string {
  return strings.reduce((text, part, i) => text + (i === 0 ? '' : cell(values[i - 1])) + part, '');
}

/** Columns padded to their widest cell; the last column is not padded so lines carry no trailing blanks. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = [headers.map(cell), ...rows.map((row) => headers.map((_, i) => cell(row[i])))];
  // reduce, not Math.max(...): a spread of a long listing's rows as arguments overflows the stack.
  const widths = headers.map((_, i) =>
    cells.reduce((widest, row) => Math.max(widest, (row[i] ?? '').length), 0),
  );
  return cells
    .map((row) =>
      row
        .map((text, i) => (i === row.length - 1 ? text : text.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Label/value pairs, values aligned, for showing one record. */
export function fields(pairs: readonly (readonly [string, unknown])[]): string {
  const width = pairs.reduce((widest, [label]) => Math.max(widest, label.length), 0) + 1;
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${cell(value)}`.trimEnd()).join('\n');
}
