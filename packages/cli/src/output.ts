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

/** One cell as people read it: dates in ISO-8601, structured values as compact JSON. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Columns padded to their widest cell; the last column is not padded so lines carry no trailing blanks. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = [headers.map(cell), ...rows.map((row) => headers.map((_, i) => cell(row[i])))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
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
  const width = Math.max(...pairs.map(([label]) => label.length)) + 1;
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${cell(value)}`.trimEnd()).join('\n');
}
