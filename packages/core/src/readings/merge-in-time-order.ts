import { type Reading } from './reading.js';
import { type ReadingScan } from './reading.port.js';

/** One page of one topic's readings from `fromMs` to `toMs` (inclusive), by time, at most `limit`. */
export type TopicPage = (topic: string, fromMs: number, toMs: number, limit: number) => Promise<Reading[]>;

/**
 * The k-way merge behind every store's `scanInTimeOrder`: each topic is read page by page in its own time
 * order (an index seek per page), and the heads are merged. Memory holds one page per topic plus the page
 * being handed out. Equal times come in the order of `scan.topics`.
 */
export async function* mergeInTimeOrder(
  scan: ReadingScan,
  pageSize: number,
  readPage: TopicPage,
): AsyncGenerator<readonly Reading[]> {
  const size = Math.max(1, Math.floor(pageSize));
  const toMs = scan.to.getTime();
  const sources = [...new Set(scan.topics)].map((topic) => ({
    topic,
    page: [] as Reading[],
    index: 0,
    nextFrom: scan.from.getTime(),
    done: false,
  }));
  const fill = async (source: (typeof sources)[number]) => {
    source.page = source.nextFrom > toMs ? [] : await readPage(source.topic, source.nextFrom, toMs, size);
    source.index = 0;
    const last = source.page[source.page.length - 1];
    if (last === undefined || source.page.length < size) source.done = true;
    if (last !== undefined) source.nextFrom = last.time.getTime() + 1;
  };
  let out: Reading[] = [];
  for (;;) {
    let best: (typeof sources)[number] | undefined;
    let bestAt = Number.POSITIVE_INFINITY;
    for (const source of sources) {
      // Awaited only when a page ran out: once per page, not once per reading.
      if (source.index >= source.page.length && !source.done) await fill(source);
      const head = source.page[source.index];
      if (head !== undefined && head.time.getTime() < bestAt) {
        best = source;
        bestAt = head.time.getTime();
      }
    }
    const head = best?.page[best.index];
    if (best === undefined || head === undefined) break;
    best.index += 1;
    out.push(head);
    if (out.length >= size) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}
