import { parse as parseCsv } from 'csv-parse/sync';
import { expandReadingItems, fromCsvTextCell, InvalidInputError, isPlainObject } from '@hortus/core';
import { UsageError } from '../exit-codes.js';
import { type FileLine, type ImportFormat } from './lines.js';

export type ParsedLine = { readonly items: readonly Item[] } | { readonly reason: string };
interface Item {
  readonly reading: unknown;
  /** Names the topic in rejections of the compact form, where one line holds several readings. */
  readonly label: string;
}

const csvColumns = ['group', 'topic', 'value', 'time'] as const;
export type CsvColumn = (typeof csvColumns)[number];

/** Records parsed by csv-parse in one call: a call per record costs ~80 µs, a call per batch ~15 µs a record. */
export const CSV_PARSE_BATCH = 500;

/** One CSV record: its first line, and its text, or why it was refused before parsing. */
type CsvRecord =
  { readonly line: number; readonly text: string } | { readonly line: number; readonly reason: string };

export function tooLongReason(line: FileLine, maxBytes: number): string {
  return `line is ${line.bytes} bytes, longer than ${maxBytes}`;
}

function oddQuotes(text: string): boolean {
  let odd = false;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) odd = !odd;
  return odd;
}

/**
 * Joins physical lines into CSV records. A line break belongs inside a field exactly when the quotes seen so
 * far in the record are odd (RFC 4180: a quoted field opens and closes with a quote, and a quote inside it is
 * doubled), so a record is complete once its quotes are even; the fields themselves are left to csv-parse.
 * Working on the capped lines keeps --max-line-bytes, and a record never grows past it either: a quote that
 * is never closed costs one rejection, not the rest of the file held in memory.
 */
export async function* csvRecords(
  lines: AsyncIterable<FileLine>,
  maxBytes: number,
  first: readonly FileLine[],
): AsyncGenerator<CsvRecord> {
  let open: { line: number; parts: string[]; bytes: number } | undefined;
  const all = async function* (): AsyncGenerator<FileLine> {
    yield* first;
    yield* lines;
  };
  for await (const physical of all()) {
    const { text } = physical;
    if (text === undefined) {
      if (open !== undefined) yield { line: open.line, text: open.parts.join('\n') };
      open = undefined;
      yield { line: physical.number, reason: tooLongReason(physical, maxBytes) };
      continue;
    }
    if (open === undefined) {
      if (text.trim() === '') continue;
      if (!oddQuotes(text)) {
        yield { line: physical.number, text };
        continue;
      }
      open = { line: physical.number, parts: [text], bytes: physical.bytes };
      continue;
    }
    open.parts.push(text);
    open.bytes += physical.bytes + 1;
    if (open.bytes > maxBytes) {
      yield {
        line: open.line,
        reason: `a quoted field is not closed within ${maxBytes} bytes (lines ${open.line}-${physical.number})`,
      };
      open = undefined;
    } else if (oddQuotes(text)) {
      yield { line: open.line, text: open.parts.join('\n') };
      open = undefined;
    }
  }
  if (open !== undefined) yield { line: open.line, text: open.parts.join('\n') };
}

/** The fields of each record, or why csv-parse refused it; one parse for the batch unless one is malformed. */
export function parseCsvRecords(texts: readonly string[]): (string[] | { reason: string })[] {
  try {
    const parsed = parseCsv(texts.join('\n'), { relax_column_count: true });
    // Each text holds exactly one record (blank ones were skipped); anything else means a malformed one.
    if (parsed.length === texts.length) return parsed;
  } catch {
    // One of them is malformed: find which, one by one.
  }
  return texts.map((text) => {
    try {
      const [fields, ...more] = parseCsv(text, { relax_column_count: true });
      return fields !== undefined && more.length === 0 ? fields : { reason: 'malformed CSV' };
    } catch (error) {
      return { reason: `malformed CSV: ${csvProblem(error)}` };
    }
  });
}

/** csv-parse's message without its "at line N" (the line of the one record, not of the file). */
function csvProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*at line \d+/u, '').replace(/\.$/u, '');
}

export function csvHeader(fields: readonly string[] | undefined, lineNumber: number): CsvColumn[] {
  const names = (fields ?? []).map((name) => name.trim().toLowerCase());
  const known = names.every((name): name is CsvColumn => (csvColumns as readonly string[]).includes(name));
  const required = ['group', 'topic', 'value'].every((name) => names.includes(name));
  if (!known || !required || new Set(names).size !== names.length) {
    throw new UsageError(
      `line ${lineNumber}: a CSV file must start with the header group,topic,value,time (time optional)`,
    );
  }
  return names as CsvColumn[];
}

export function csvReading(values: readonly string[], columns: readonly CsvColumn[]): ParsedLine {
  if (values.length !== columns.length) {
    return { reason: `expected ${columns.length} fields, found ${values.length}` };
  }
  const reading: Record<string, unknown> = {};
  columns.forEach((column, i) => {
    const value = values[i] ?? '';
    // A text cell an export guarded against formulas comes back as it was.
    if (column === 'group' || column === 'topic') reading[column] = fromCsvTextCell(value);
    // An empty time means "now", as when a box sends no time.
    else if (!(column === 'time' && value.trim() === '')) reading[column] = value;
  });
  return { items: [{ reading, label: '' }] };
}

/**
 * One reading per line, or the compact `{group, time?, values: {<topic>: <number>}}` that holds several;
 * expanded by the core, as the HTTP and MQTT ingest do.
 */
export function parseNdjsonLine(line: string): ParsedLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return { reason: 'not valid JSON' };
  }
  if (!isPlainObject(parsed)) return { reason: 'must be a JSON object' };
  const values = parsed['values'];
  if (values === undefined) return { items: [{ reading: parsed, label: '' }] };
  if (!isPlainObject(values) || Object.keys(values).length === 0) {
    return { reason: 'values must be an object of <topic>: <number> with at least one entry' };
  }
  try {
    return {
      items: expandReadingItems(parsed).map((reading) => ({
        reading,
        label: isPlainObject(reading) ? `${String(reading['topic'])}: ` : '',
      })),
    };
  } catch (error) {
    if (error instanceof InvalidInputError) return { reason: error.message };
    throw error;
  }
}

export function formatFromName(file: string): ImportFormat | undefined {
  if (/\.csv$/iu.test(file)) return 'csv';
  if (/\.(ndjson|jsonl)$/iu.test(file)) return 'ndjson';
  return undefined;
}
