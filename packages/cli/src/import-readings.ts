import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import {
  expandReadingItems,
  InvalidInputError,
  isPlainObject,
  MAX_READINGS_PER_BATCH,
  RecordReadings,
  type RecordReadingsResult,
} from '@hortus/core';
import { UsageError } from './exit-codes.js';
import { type Output, say, type TextSink, table } from './output.js';
import { type RunIo } from './io.js';
import { type UseCaseResolver } from './store.js';

export const importFormats = ['csv', 'ndjson'] as const;
export type ImportFormat = (typeof importFormats)[number];

/** Rejections kept for the summary; a wholly broken file must not hold every line in memory. */
export const MAX_LISTED_REJECTIONS = 1000;
/** Longest line read by default: a compact line of a few hundred topics fits many times over. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024;
export const MAX_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** One line of a file: its text, or only its length when it was longer than the limit. */
export interface FileLine {
  /** 1-based. */
  readonly number: number;
  /** Without the line break; undefined when the line was longer than the limit (its bytes were dropped). */
  readonly text?: string;
  readonly bytes: number;
}

/**
 * Splits a byte stream into lines, holding at most `maxBytes` of one line: the bytes of a longer line are
 * dropped as they arrive, so a file that is one 300 MB line costs a chunk of memory, not 300 MB (readline
 * would build the whole line first). `peakHeldBytes` tells how much of a line was ever held.
 */
export class BoundedLines {
  peakHeldBytes = 0;

  constructor(
    private readonly input: AsyncIterable<Buffer>,
    private readonly maxBytes: number,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<FileLine> {
    let parts: Buffer[] = [];
    let held = 0;
    let bytes = 0;
    let number = 0;
    const finish = (): FileLine => {
      number += 1;
      const line: FileLine =
        bytes > this.maxBytes
          ? { number, bytes }
          : { number, bytes, text: Buffer.concat(parts, held).toString('utf8').replace(/\r$/u, '') };
      parts = [];
      held = 0;
      bytes = 0;
      return line;
    };
    for await (const chunk of this.input) {
      let start = 0;
      while (start <= chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline;
        bytes += end - start;
        if (bytes <= this.maxBytes) {
          // A copy, not a view: a view would keep the whole chunk alive.
          if (end > start) parts.push(Buffer.from(chunk.subarray(start, end)));
          held += end - start;
          if (held > this.peakHeldBytes) this.peakHeldBytes = held;
        } else if (held > 0) {
          parts = [];
          held = 0;
        }
        if (newline === -1) break;
        yield finish();
        start = newline + 1;
      }
    }
    if (bytes > 0) yield finish();
  }
}

export interface Rejection {
  /** 1-based line of the file. */
  readonly line: number;
  readonly reason: string;
}

export interface ImportSummary {
  readonly file: string;
  readonly format: ImportFormat;
  /** Records: non-empty lines (NDJSON), or records after the header (CSV; one may span quoted line breaks). */
  readonly lines: number;
  /** Readings that were valid, including ones the store already held. */
  readonly accepted: number;
  /** Accepted readings that were not stored before. */
  readonly stored: number;
  /** How many readings or lines were rejected; `rejections` lists the first of them. */
  readonly rejected: number;
  readonly rejections: readonly Rejection[];
}

type ParsedLine = { readonly items: readonly Item[] } | { readonly reason: string };
interface Item {
  readonly reading: unknown;
  /** Names the topic in rejections of the compact form, where one line holds several readings. */
  readonly label: string;
}

const csvColumns = ['group', 'topic', 'value', 'time'] as const;
type CsvColumn = (typeof csvColumns)[number];

/** Records parsed by csv-parse in one call: a call per record costs ~80 µs, a call per batch ~15 µs a record. */
const CSV_PARSE_BATCH = 500;

/** One CSV record: its first line, and its text, or why it was refused before parsing. */
type CsvRecord =
  { readonly line: number; readonly text: string } | { readonly line: number; readonly reason: string };

function tooLongReason(line: FileLine, maxBytes: number): string {
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
async function* csvRecords(
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
function parseCsvRecords(texts: readonly string[]): (string[] | { reason: string })[] {
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

function csvHeader(fields: readonly string[] | undefined, lineNumber: number): CsvColumn[] {
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

function csvReading(values: readonly string[], columns: readonly CsvColumn[]): ParsedLine {
  if (values.length !== columns.length) {
    return { reason: `expected ${columns.length} fields, found ${values.length}` };
  }
  const reading: Record<string, unknown> = {};
  columns.forEach((column, i) => {
    const value = values[i] ?? '';
    // An empty time means "now", as when a box sends no time.
    if (!(column === 'time' && value.trim() === '')) reading[column] = value;
  });
  return { items: [{ reading, label: '' }] };
}

/**
 * One reading per line, or the compact `{group, time?, values: {<topic>: <number>}}` that holds several;
 * expanded by the core, as the HTTP and MQTT ingest do.
 */
function parseNdjsonLine(line: string): ParsedLine {
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

function formatFromName(file: string): ImportFormat | undefined {
  if (/\.csv$/iu.test(file)) return 'csv';
  if (/\.(ndjson|jsonl)$/iu.test(file)) return 'ndjson';
  return undefined;
}

interface Progress {
  readonly bytes: number;
  readonly lines: number;
  readonly accepted: number;
  readonly rejected: number;
}

/**
 * A bar redrawn in place when stderr is a terminal; otherwise a JSON line at each tenth of the file,
 * so logs of scripted imports show progress without a flood.
 */
export class ImportProgress {
  private lastDrawn = 0;
  private lastTenth = 0;

  constructor(
    private readonly sink: TextSink,
    private readonly file: string,
    private readonly totalBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  update(progress: Progress, final = false): void {
    const percent =
      this.totalBytes === 0 ? 100 : Math.min(100, Math.floor((progress.bytes / this.totalBytes) * 100));
    if (this.sink.isTTY === true) {
      if (!final && this.now() - this.lastDrawn < 100) return;
      this.lastDrawn = this.now();
      const width = 30;
      const filled = Math.round((percent / 100) * width);
      this.sink.write(
        `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percent).padStart(3)}%  ` +
          `${progress.lines} lines, ${progress.rejected} rejected${final ? '\n' : ''}`,
      );
      return;
    }
    const tenth = Math.floor(percent / 10);
    if (tenth <= this.lastTenth && !(final && this.lastTenth < 10)) return;
    this.lastTenth = final ? 10 : tenth;
    this.sink.write(
      `${JSON.stringify({
        event: 'readings.import.progress',
        file: this.file,
        percent: final ? 100 : percent,
        ...progress,
      })}\n`,
    );
  }
}

export interface ImportOptions {
  readonly format?: ImportFormat;
  readonly batchSize: number;
  /** Longer lines are rejected (and never held whole); DEFAULT_MAX_LINE_BYTES when not given. */
  readonly maxLineBytes?: number;
}

/** The first line without a byte order mark (which editors on Windows write). */
async function* withoutBom(lines: AsyncIterable<FileLine>): AsyncGenerator<FileLine> {
  for await (const line of lines) {
    yield line.number === 1 && line.text !== undefined
      ? { ...line, text: line.text.replace(/^\uFEFF/u, '') }
      : line;
  }
}

/** Streams the file through RecordReadings in batches; the summary lists rejected lines by number. */
export async function readFileInBatches(
  file: string,
  options: ImportOptions,
  record: (items: readonly unknown[]) => Promise<RecordReadingsResult>,
  progress: ImportProgress,
): Promise<ImportSummary> {
  const stream = createReadStream(file);
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const lines = new BoundedLines(stream, maxLineBytes);
  let format = options.format ?? formatFromName(file);
  let columns: CsvColumn[] | undefined;
  const counts = { lines: 0, accepted: 0, stored: 0, rejected: 0 };
  const rejections: Rejection[] = [];
  // Lines rejected while parsing wait for their batch, so the summary lists every rejection in line order.
  let pending: Rejection[] = [];
  let batch: unknown[] = [];
  let origins: { line: number; label: string }[] = [];
  let anyBatchStored = false;
  const report = (final = false): void =>
    progress.update(
      { bytes: stream.bytesRead, lines: counts.lines, accepted: counts.accepted, rejected: counts.rejected },
      final,
    );
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return settle([]);
    const result = await record(batch).catch((error: unknown) => {
      report(true);
      // The error keeps its class (and so its exit code); its message gains where to resume.
      const stopLine = origins[0]?.line ?? 0;
      const stored = anyBatchStored
        ? `the readings before line ${stopLine} are stored`
        : 'nothing was stored';
      if (error instanceof Error)
        error.message = `${error.message} (import stopped at line ${stopLine}; ${stored})`;
      throw error;
    });
    counts.accepted += result.accepted;
    counts.stored += result.stored;
    anyBatchStored = true;
    settle(
      result.rejected.map(({ index, reason }) => {
        const origin = origins[index];
        return { line: origin?.line ?? 0, reason: `${origin?.label ?? ''}${reason}` };
      }),
    );
  };
  const settle = (rejectedByStore: readonly Rejection[]): void => {
    const settled = [...pending, ...rejectedByStore].sort((a, b) => a.line - b.line);
    counts.rejected += settled.length;
    for (const rejection of settled) {
      if (rejections.length >= MAX_LISTED_REJECTIONS) break;
      rejections.push(rejection);
    }
    pending = [];
    batch = [];
    origins = [];
    report();
  };

  const reject = async (line: number, reason: string): Promise<void> => {
    counts.lines += 1;
    pending.push({ line, reason });
    if (pending.length >= options.batchSize) await flush();
  };
  const tooLong = (line: FileLine): Promise<void> => reject(line.number, tooLongReason(line, maxLineBytes));
  const accept = async (line: number, parsed: ParsedLine): Promise<void> => {
    if ('reason' in parsed) return reject(line, parsed.reason);
    counts.lines += 1;
    for (const { reading, label } of parsed.items) {
      batch.push(reading);
      origins.push({ line, label });
      if (batch.length >= options.batchSize) await flush();
    }
  };
  const ndjsonLine = async (line: FileLine): Promise<void> => {
    if (line.text === undefined) return tooLong(line);
    if (line.text.trim() === '') return;
    await accept(line.number, parseNdjsonLine(line.text));
  };
  // CSV records wait for csv-parse in groups; the first of a file is its header.
  let texts: { line: number; text: string }[] = [];
  const parseTexts = async (): Promise<void> => {
    const parsed = parseCsvRecords(texts.map((t) => t.text));
    const waiting = texts;
    texts = [];
    for (const [i, { line }] of waiting.entries()) {
      const fields = parsed[i] ?? { reason: 'malformed CSV' };
      if (columns === undefined) {
        columns = csvHeader(Array.isArray(fields) ? fields : undefined, line);
        continue;
      }
      await accept(line, Array.isArray(fields) ? csvReading(fields, columns) : fields);
    }
  };

  try {
    const iterator = withoutBom(lines)[Symbol.asyncIterator]();
    const rest: AsyncIterable<FileLine> = { [Symbol.asyncIterator]: () => iterator };
    // Lines up to the first with text decide the format when neither option nor file name does.
    const head: FileLine[] = [];
    if (format === undefined) {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        head.push(next.value);
        if (next.value.text?.trim() !== '') break;
      }
      format = head.at(-1)?.text?.trimStart().startsWith('{') === true ? 'ndjson' : 'csv';
    }
    if (format === 'ndjson') {
      for (const line of [...head]) await ndjsonLine(line);
      for await (const line of rest) await ndjsonLine(line);
    } else {
      for await (const item of csvRecords(rest, maxLineBytes, head)) {
        if ('text' in item) {
          texts.push(item);
          // The header decides the columns of every later record, so it is parsed on its own.
          if (texts.length >= CSV_PARSE_BATCH || columns === undefined) await parseTexts();
          continue;
        }
        await parseTexts();
        await reject(item.line, item.reason);
      }
      await parseTexts();
    }
    await flush();
  } finally {
    stream.destroy();
  }
  report(true);
  return { file, format: format ?? 'csv', ...counts, rejections };
}

function showSummary(summary: ImportSummary): string {
  const already = summary.accepted - summary.stored;
  const lines = [
    say`Imported ${summary.file} (${summary.format}): ${summary.lines} lines, ` +
      `${summary.accepted} readings accepted (${summary.stored} new, ${already} already stored), ` +
      `${summary.rejected} rejected.`,
  ];
  if (summary.rejections.length > 0) {
    lines.push('', 'Rejected:');
    lines.push(
      table(
        ['LINE', 'REASON'],
        summary.rejections.map((r) => [r.line, r.reason]),
      ),
    );
    const unlisted = summary.rejected - summary.rejections.length;
    if (unlisted > 0) lines.push(`... and ${unlisted} more.`);
  }
  return lines.join('\n');
}

/** `hortus readings import`: checks the file and options before it opens the store. */
export async function importReadings(
  io: RunIo,
  output: Output,
  file: string,
  options: ImportOptions,
  openStore: (work: (useCase: UseCaseResolver) => Promise<ImportSummary>) => Promise<ImportSummary>,
): Promise<void> {
  const { batchSize, maxLineBytes = DEFAULT_MAX_LINE_BYTES } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_READINGS_PER_BATCH) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${MAX_READINGS_PER_BATCH}`);
  }
  if (!Number.isInteger(maxLineBytes) || maxLineBytes < 1 || maxLineBytes > MAX_MAX_LINE_BYTES) {
    throw new UsageError(`--max-line-bytes must be a whole number from 1 to ${MAX_MAX_LINE_BYTES}`);
  }
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error('not a regular file');
    size = info.size;
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const progress = new ImportProgress(io.stderr, basename(file), size);
  const summary = await openStore((useCase) => {
    const recordReadings = useCase(RecordReadings);
    return readFileInBatches(file, options, (items) => recordReadings.execute(items), progress);
  });
  output.result(summary, showSummary);
  if (summary.rejected > 0) {
    throw new InvalidInputError(
      `${summary.rejected} rejected (listed in the summary); the valid readings were stored`,
    );
  }
}
