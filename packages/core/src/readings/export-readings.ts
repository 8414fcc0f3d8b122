import { inject, injectable } from 'inversify';
import { InvalidInputError } from '../shared/errors.js';
import { optionalDateBound, requireText } from '../shared/validation.js';
import { type Reading, requireTopic } from './reading.js';
import { READING_REPOSITORY, type ReadingExportSelection, type ReadingRepository } from './reading.port.js';

/** Readings per page read from the store: large enough to amortise a query, small enough to hold. */
export const EXPORT_PAGE_SIZE = 2000;

/**
 * Every reading of a group (of one topic, or of all), optionally between two times, page by page in
 * (topic, time) order, for a download or a backup of the raw data. `select` checks the input before anything
 * is read, so a transport can refuse it before it starts a stream.
 */
@injectable()
export class ExportReadings {
  constructor(@inject(READING_REPOSITORY) private readonly readings: ReadingRepository) {}

  select(input: { group: unknown; topic?: unknown; from?: unknown; to?: unknown }): ReadingExportSelection {
    const group = requireText(input.group, 'group');
    const topic = input.topic === undefined ? undefined : requireTopic(input.topic);
    const from = optionalDateBound(input.from, 'from', 'start');
    const to = optionalDateBound(input.to, 'to', 'end');
    if (from !== undefined && to !== undefined && from > to) {
      throw InvalidInputError.forField('from', 'must not be after to');
    }
    return {
      group,
      ...(topic === undefined ? {} : { topic }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    };
  }

  async *pages(selection: ReadingExportSelection, pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<Reading[]> {
    let page = await this.readings.page(selection, undefined, pageSize);
    while (page.length > 0) {
      yield page;
      const last = page[page.length - 1] as Reading;
      if (page.length < pageSize) return;
      page = await this.readings.page(selection, { topic: last.topic, time: last.time }, pageSize);
    }
  }
}

export const exportFormats = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof exportFormats)[number];

/** The first line of a CSV export: the columns `hortus readings import` reads. */
export const CSV_EXPORT_HEADER = 'group,topic,value,time\n';

/**
 * A text a spreadsheet would run as a formula: it starts with =, +, -, @, a tab or a carriage return. Any
 * single quotes before such a start count too, so that the guard below can be taken off again, exactly.
 */
const formulaStart = /^'*[=+\-@\t\r]/u;

/**
 * One text cell of a CSV export (group, topic), for the HTTP download and the CLI alike. A formula-like
 * text gets a leading single quote and is quoted, as OWASP advises against CSV injection; any other is
 * quoted when RFC 4180 needs it (a comma, quote or line break), its quotes doubled. Numbers are not text
 * cells: a negative value stays a number.
 */
export function csvTextCell(text: string): string {
  if (formulaStart.test(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\r\n]/u.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** What `csvTextCell` was given, from its cell's parsed text: `hortus readings import` reads exports back. */
export function fromCsvTextCell(text: string): string {
  return text.startsWith("'") && formulaStart.test(text) ? text.slice(1) : text;
}

/** One line per reading, each ending with a line break, in the columns (CSV) or fields (NDJSON) of the import. */
export function formatReadings(readings: readonly Reading[], format: ExportFormat): string {
  let text = '';
  for (const { group, topic, value, time } of readings) {
    text +=
      format === 'csv'
        ? `${csvTextCell(group)},${csvTextCell(topic)},${value},${time.toISOString()}\n`
        : `${JSON.stringify({ group, topic, value, time: time.toISOString() })}\n`;
  }
  return text;
}
