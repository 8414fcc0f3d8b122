// `pnpm bench`: starts its own servers, warms up, measures, and writes bench/results/latest.{json,md}.
// `pnpm bench:smoke` runs every part for a moment (CI: so the benchmark cannot rot) and writes to a temp dir.
// Figures only: nothing here is a timed test, and no figure is written that was not measured in this run.
// This file parses the options, runs the chosen parts (one module each) and prints the report.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { backtestMarkdown, backtestPart, backtestTargets } from './backtest.mjs';
import { boxesMarkdown, boxesPart, boxesTargets } from './boxes.mjs';
import { capacityMarkdown, capacityPart, capacityTargets } from './capacity-part.mjs';
import { cliMarkdown, cliStart, cliTargets } from './cli.mjs';
import { consoleMarkdown, consolePart, consoleTargets } from './console.mjs';
import { engineMarkdown, enginePart, engineTargets } from './engine.mjs';
import { cleanUp, createBench, log, root, round } from './harness.mjs';
import { loginsMarkdown, loginsPart, loginsTargets } from './logins.mjs';
import { memoryMarkdown, memoryPart, memoryTargets } from './memory-store.mjs';
import { mongoMarkdown, mongoPart, mongoTargets } from './mongo.mjs';
import { pollingMarkdown, pollingPart, pollingTargets } from './polling.mjs';
import { scaleMarkdown, scalePart, scaleTargets } from './scale.mjs';
import { sqliteMarkdown, sqlitePart, sqlitePolling, sqliteTargets } from './sqlite.mjs';

const smoke = process.argv.includes('--smoke');
/** `--only=polling,scale,memory,mongo` runs some parts (while working on one); the report then lists only those. */
const onlyArgument = process.argv.find((argument) => argument.startsWith('--only='));
const chosen = new Set(
  (
    onlyArgument?.slice('--only='.length) ??
    'polling,scale,memory,sqlite,mongo,logins,capacity,boxes,engine,backtest,console,cli'
  ).split(','),
);

/**
 * Every part in the order it runs and reports: its key in the results (and in `--only`), how it runs, and
 * its rows of the targets table and lines of the report.
 */
const parts = [
  { key: 'polling', run: pollingPart, targets: pollingTargets, markdown: pollingMarkdown },
  { key: 'scale', run: scalePart, targets: scaleTargets, markdown: scaleMarkdown },
  { key: 'memoryStore', name: 'memory', run: memoryPart, targets: memoryTargets, markdown: memoryMarkdown },
  { key: 'sqlite', run: sqlitePart, targets: sqliteTargets, markdown: sqliteMarkdown },
  {
    // The SQLite part's polling alone; its figures take the SQLite part's place.
    key: 'sqlite',
    name: 'sqlite-polling',
    run: async (bench) => {
      const directory = await mkdtemp(join(tmpdir(), 'hortus-bench-sqlite-'));
      try {
        return { polling: await sqlitePolling(bench, directory) };
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  },
  { key: 'mongo', run: mongoPart, targets: mongoTargets, markdown: mongoMarkdown },
  { key: 'logins', run: loginsPart, targets: loginsTargets, markdown: loginsMarkdown },
  { key: 'capacity', run: capacityPart, targets: capacityTargets, markdown: capacityMarkdown },
  { key: 'boxes', run: boxesPart, targets: boxesTargets, markdown: boxesMarkdown },
  {
    key: 'engine',
    run: ({ smoke: tiny }) => enginePart({ smoke: tiny }),
    targets: engineTargets,
    markdown: engineMarkdown,
  },
  {
    key: 'backtest',
    run: ({ smoke: tiny }) => backtestPart({ smoke: tiny }),
    targets: backtestTargets,
    markdown: backtestMarkdown,
  },
  { key: 'console', run: consolePart, targets: consoleTargets, markdown: consoleMarkdown },
  {
    key: 'cli',
    run: ({ smoke: tiny }) => cliStart({ rounds: tiny ? 1 : 5 }),
    targets: cliTargets,
    markdown: cliMarkdown,
  },
];

function markdown(results) {
  const { machine } = results;
  const lines = [
    `Measured ${results.date} on ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGb} GB, ` +
      `Node ${machine.node} (${machine.platform})${results.smoke ? ' - SMOKE RUN, the figures mean nothing' : ''}.`,
    '',
    '| Target | Goal | Measured | Met |',
    '|---|---|---|---|',
    ...results.targets.map(
      ({ name, goal, measured, met }) => `| ${name} | ${goal} | ${measured} | ${met ? 'yes' : 'NO'} |`,
    ),
  ];
  for (const part of parts) {
    if (part.markdown !== undefined && results[part.key] !== undefined)
      lines.push(...part.markdown(results[part.key]));
  }
  return `${lines.join('\n')}\n`;
}

async function main() {
  const started = performance.now();
  for (const pkg of ['core', 'adapter-memory', 'adapter-sqlite', 'adapter-mongo', 'http-koa', 'cli']) {
    if (!existsSync(join(root, `packages/${pkg}/dist/src/index.js`))) {
      throw new Error(`packages/${pkg} is not built: run the build first (npx pnpm@10.34.9 build)`);
    }
  }
  const bench = createBench({ smoke });
  const [cpu] = cpus();
  const results = {
    date: new Date().toISOString(),
    smoke,
    machine: {
      cpus: cpus().length,
      cpuModel: cpu?.model.trim() ?? 'unknown',
      memoryGb: Math.round(totalmem() / 1024 ** 3),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    plan: bench.plan,
  };
  for (const part of parts) {
    const name = part.name ?? part.key;
    // sqlite-polling only stands in for the whole SQLite part.
    if (!chosen.has(name) || (name === 'sqlite-polling' && chosen.has('sqlite'))) continue;
    const partStarted = performance.now();
    results[part.key] = await part.run(bench);
    log(`  ${name}: ${round((performance.now() - partStarted) / 1000, 1)} s`);
  }
  // Each part's rows (a part that did not run adds none).
  results.targets = parts.flatMap((part) => part.targets?.(results[part.key]) ?? []);
  results.seconds = round((performance.now() - started) / 1000, 1);

  // Only a full run of every part replaces the published figures.
  const published = !smoke && onlyArgument === undefined;
  const directory = published ? join(root, 'bench/results') : await mkdtemp(join(tmpdir(), 'hortus-bench-'));
  await mkdir(directory, { recursive: true });
  const table = markdown(results);
  await writeFile(join(directory, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(directory, 'latest.md'), table);
  process.stdout.write(table);
  log(`written to ${directory} in ${results.seconds} s`);
}

main().then(cleanUp, async (error) => {
  log(`bench failed: ${error?.stack ?? error}`);
  await cleanUp();
  process.exitCode = 1;
});
// Ctrl-C must not leave servers behind.
process.once('SIGINT', () => {
  cleanUp().finally(() => process.exit(130));
});
