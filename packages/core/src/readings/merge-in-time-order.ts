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
  // Each source's head time as a number (Infinity once it is spent): the merge compares these only.
  const heads = new Float64Array(sources.length).fill(Number.POSITIVE_INFINITY);
  const advance = async (at: number): Promise<void> => {
    const source = sources[at];
    if (source === undefined) return;
    source.index += 1;
    if (source.index >= source.page.length && !source.done) {
      source.page = source.nextFrom > toMs ? [] : await readPage(source.topic, source.nextFrom, toMs, size);
      source.index = 0;
      const last = source.page[source.page.length - 1];
      if (last === undefined || source.page.length < size) source.done = true;
      if (last !== undefined) source.nextFrom = last.time.getTime() + 1;
    }
    heads[at] = source.page[source.index]?.time.getTime() ?? Number.POSITIVE_INFINITY;
  };
  for (let at = 0; at < sources.length; at += 1) {
    const source = sources[at];
    if (source !== undefined) source.index = -1;
    await advance(at);
  }
  let out: Reading[] = [];
  for (;;) {
    let best = -1;
    let bestAt = Number.POSITIVE_INFINITY;
    for (let at = 0; at < heads.length; at += 1) {
      const head = heads[at] ?? Number.POSITIVE_INFINITY;
      if (head < bestAt) [best, bestAt] = [at, head];
    }
    const source = sources[best];
    const reading = source?.page[source.index];
    if (reading === undefined) break;
    out.push(reading);
    // Awaited only when a page ran out: once per page, not once per reading.
    if (source !== undefined && source.index + 1 >= source.page.length && !source.done) await advance(best);
    else if (source !== undefined) {
      source.index += 1;
      heads[best] = source.page[source.index]?.time.getTime() ?? Number.POSITIVE_INFINITY;
    }
    if (out.length >= size) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}
