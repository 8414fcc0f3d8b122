// What a reading import reads: the formats, the limits and the file's lines. No parser here, so that a
// command's options can name the limits without loading csv-parse.
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
