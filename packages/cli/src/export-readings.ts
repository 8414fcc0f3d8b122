import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { CSV_EXPORT_HEADER, type ExportFormat, ExportReadings, formatReadings } from '@hortus/core';
import { UsageError } from './exit-codes.js';
import { type TextSink } from './output.js';
import { type RunIo } from './io.js';
import { type UseCaseResolver } from './store.js';

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
 * How far an export is. The total is not known before the end (counting would read everything twice), so a
 * terminal gets a line redrawn in place with the count, the rate and the topic; anything else gets a JSON
 * line every `everyMs`.
 */
export class ExportProgress {
  private last = 0;
  private readonly started: number;

  constructor(
    private readonly sink: TextSink,
    private readonly now: () => number = Date.now,
    private readonly everyMs = 2000,
  ) {
    this.started = now();
  }

  update(readings: number, topic: string | undefined, final = false): void {
    const now = this.now();
    const tty = this.sink.isTTY === true;
    if (!final && now - this.last < (tty ? 100 : this.everyMs)) return;
    this.last = now;
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = Math.round(readings / seconds);
    if (tty) {
      this.sink.write(
        `\r\u001b[K${readings} readings exported, ${rate}/s${topic === undefined ? '' : `, at ${topic}`}` +
          (final ? ', done\n' : ''),
      );
      return;
    }
    this.sink.write(
      `${JSON.stringify({ event: 'readings.export.progress', readings, perSecond: rate, topic, done: final })}\n`,
    );
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
    const progress = new ExportProgress(io.stderr, now);
    let count = 0;
    try {
      if (options.format === 'csv') await write(sink, CSV_EXPORT_HEADER);
      for await (const page of exporter.pages(selection)) {
        await write(sink, formatReadings(page, options.format));
        count += page.length;
        progress.update(count, page.at(-1)?.topic);
      }
      progress.update(count, undefined, true);
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
