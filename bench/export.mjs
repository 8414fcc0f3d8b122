// `node bench/export.mjs [--readings 1000000] [--stores memory,sqlite]` (after a build): the export's rate
// (readings/s) and how much the process grows while it runs, on each store. Prints one JSON line per store.
// The export is ExportReadings page by page into /dev/null, as `hortus readings export` does it.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { URL } from 'node:url';

// The composition root builds the container, as `hortus` does; the core comes from the CLI's dependencies.
const cli = await import(new URL('../packages/cli/dist/src/index.js', import.meta.url).href);
const core = await import(
  createRequire(new URL('../packages/cli/package.json', import.meta.url)).resolve('@hortus/core')
);

const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
};
const total = Number(option('readings', '1000000'));
const stores = option('stores', 'memory,sqlite').split(',');
const MB = 1024 * 1024;

async function measure(kind) {
  const dir = await mkdtemp(join(tmpdir(), 'hortus-export-bench-'));
  const config = cli.loadConfig({ STORE: kind, HORTUS_DATA_DIR: dir, LOG_LEVEL: 'error' });
  const container = await cli.createContainer(config);
  const lifecycle = container.get(core.STORE_LIFECYCLE);
  await lifecycle.start();
  try {
    const repository = container.get(core.READING_REPOSITORY);
    const topics = ['esp/air/temperature', 'esp/air/humidity', 'esp/air/lux', 'esp/soil/moisture/1'];
    const start = Date.parse('2020-01-01T00:00:00Z');
    for (let done = 0; done < total;) {
      const batch = [];
      for (let i = 0; i < 5000 && done < total; i += 1, done += 1) {
        batch.push({
          group: 'bench',
          topic: topics[done % 4],
          value: (done % 1000) / 10,
          time: new Date(start + done * 1000),
        });
      }
      await repository.add(batch);
    }
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const exporter = container.get(core.ExportReadings);
    const out = createWriteStream('/dev/null');
    const began = performance.now();
    let count = 0;
    out.write(core.CSV_EXPORT_HEADER);
    for await (const page of exporter.pages(exporter.select({ group: 'bench' }))) {
      if (!out.write(core.formatReadings(page, 'csv'))) await once(out, 'drain');
      count += page.length;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    out.end();
    await once(out, 'close');
    const seconds = (performance.now() - began) / 1000;
    return {
      store: kind,
      readings: count,
      seconds: Number(seconds.toFixed(2)),
      readingsPerSecond: Math.round(count / seconds),
      rssBeforeMB: Math.round(before / MB),
      rssPeakMB: Math.round(peak / MB),
      rssGrowthMB: Math.round((peak - before) / MB),
    };
  } finally {
    await lifecycle.close();
    await rm(dir, { recursive: true, force: true });
  }
}

for (const kind of stores) console.log(JSON.stringify(await measure(kind)));
