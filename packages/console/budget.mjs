// The console's bundle budget (issue 37): what the first page loads (index.html and the files it names),
// gzipped, must stay within 150 kB. Run in CI after the build; prints the figures.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 150 * 1000;
const dist = join(dirname(fileURLToPath(import.meta.url)), 'dist');
const page = await readFile(join(dist, 'index.html'), 'utf8');
const named = [...page.matchAll(/(?:src|href)="([^":]+)"/gu)].map((match) => match[1]);
let total = 0;
for (const name of ['index.html', ...named]) {
  const size = gzipSync(await readFile(join(dist, name)), { level: 9 }).length;
  total += size;
  console.log(`${name}: ${(size / 1000).toFixed(1)} kB gzip`);
}
console.log(`console first page: ${(total / 1000).toFixed(1)} kB gzip of a ${BUDGET_BYTES / 1000} kB budget`);
if (total > BUDGET_BYTES) {
  console.error('the console is over its bundle budget');
  process.exit(1);
}
