import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { CSV_EXPORT_HEADER, type ExportFormat, ExportReadings, formatReadings } from '@hortus/core';
import { UsageError } from './exit-codes.js';
import { type TextSink } from './output.js';
import { Progress, type ProgressReport } from './progress.js';
import { type RunIo } from './io.js';
import { type UseCaseResolver } from './app/data-commands.js';

export interface ExportOptions {
  readonly group: string;
  readonly topic?: string;
  readonly from?: string;
  readonly to?: string;
  readonly format: ExportFormat;
  readonly output?: string;
  /** Overwrite `output` when it exists; without it an existing file is refused, never truncated. */
  readonly force?: boolean;
}

/** The format an output file's extension names: `.csv`, or `.ndjson` / `.jsonl`; undefined for any other. */
export function formatOfFile(file: string | undefined): ExportFormat | undefined {
  const extension = /\.([a-z]+)$/iu.exec(file ?? '')?.[1]?.toLowerCase();
  if (extension === 'csv') return 'csv';
  if (extension === 'ndjson' || extension === 'jsonl') return 'ndjson';
  return undefined;
}

export interface ExportSummary {
  readonly group: string;
  readonly format: ExportFormat;
  readonly readings: number;
  readonly output: string;
  readonly seconds: number;
}

/** A sink that may push back: the caller waits for 'drain' before it writes more, so memory stays flat. */
type Sink = TextSink & { once?: (event: 'drain', listener: () => void) => unknown };

async function write(sink: Sink, text: string): Promise<void> {
  if (sink.write(text) === false && typeof sink.once === 'function') {
    await once(sink as unknown as NodeJS.EventEmitter, 'drain');
  }
}

/**
 * `hortus readings export`: pages through the store (a page of readings at a time, whatever the size of the
 * export) and writes each page before it reads the next, waiting whenever the output pushes back.
 */
export async function exportReadings(
  io: RunIo,
  options: ExportOptions,
  openStore: (work: (useCase: UseCaseResolver) => Promise<ExportSummary>) => Promise<ExportSummary>,
  now: () => number = Date.now,
): Promise<ExportSummary> {
  const started = now();
  return openStore(async (useCase) => {
    const exporter = useCase(ExportReadings);
    const selection = exporter.select(options);
    const file =
      options.output === undefined
        ? undefined
        : createWriteStream(options.output, { flags: options.force === true ? 'w' : 'wx' });
    if (file !== undefined) {
      // events.once rejects with the stream's 'error' (EEXIST, EACCES, ENOENT), so that is where it is named.
      await once(file, 'open').catch((error: unknown) => {
        throw new UsageError(
          (error as NodeJS.ErrnoException).code === 'EEXIST'
            ? `${options.output} exists: add --force to overwrite it`
            : `cannot write ${options.output}: ${(error as Error).message}`,
        );
      });
    }
    const sink: Sink = file ?? io.stdout;
    const progress = new Progress(io.stderr, { event: 'readings.export.progress', unit: 'readings', now });
    // The total is not known before the end: counting would read everything twice.
    const exported = (topic: string | undefined): ProgressReport => ({
      done: count,
      text: `${count} readings exported${topic === undefined ? '' : `, at ${topic}`}`,
      fields: { readings: count, ...(topic === undefined ? {} : { topic }) },
    });
    let count = 0;
    try {
      if (options.format === 'csv') await write(sink, CSV_EXPORT_HEADER);
      for await (const page of exporter.pages(selection)) {
        await write(sink, formatReadings(page, options.format));
        count += page.length;
        progress.update(exported(page.at(-1)?.topic));
      }
      progress.update(exported(undefined), true);
    } finally {
      if (file !== undefined) {
        file.end();
        await once(file, 'close');
      }
    }
    return {
      group: selection.group,
      format: options.format,
      readings: count,
      output: options.output ?? '-',
      seconds: (now() - started) / 1000,
    };
  });
}
