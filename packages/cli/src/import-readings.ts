import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import {
  InvalidInputError,
  MAX_READINGS_PER_BATCH,
  RecordReadings,
  type RecordReadingsResult,
} from '@hortus/core';
import { Progress } from './progress.js';
import { UsageError } from './exit-codes.js';
import { type Output, say, table } from './output.js';
import { type RunIo } from './io.js';
import { type UseCaseResolver } from './app/data-commands.js';

import {
  CSV_PARSE_BATCH,
  type CsvColumn,
  csvHeader,
  csvReading,
  csvRecords,
  formatFromName,
  parseCsvRecords,
  type ParsedLine,
  parseNdjsonLine,
  tooLongReason,
} from './import-readings/parse.js';
import {
  type FileLine,
  type ImportFormat,
  type ImportSummary,
  type Rejection,
  BoundedLines,
  DEFAULT_MAX_LINE_BYTES,
  MAX_LISTED_REJECTIONS,
  MAX_MAX_LINE_BYTES,
} from './import-readings/lines.js';

export * from './import-readings/lines.js';

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
  progress: Progress,
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
  // The file's bytes tell how far (the total is its size); lines are what people and the rate count.
  const report = (final = false): void =>
    progress.update(
      {
        done: stream.bytesRead,
        count: counts.lines,
        text: `${counts.lines} lines, ${counts.rejected} rejected`,
        fields: {
          bytes: stream.bytesRead,
          lines: counts.lines,
          accepted: counts.accepted,
          rejected: counts.rejected,
        },
      },
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
  const progress = new Progress(io.stderr, { event: 'readings.import.progress', unit: 'lines' });
  progress.start({ total: size, fields: { file: basename(file) } });
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
