// `pnpm run bench:check` (CI, after the bench smoke step): the cheap figures that hold on a loaded machine,
// because they are CPU time or ratios of two servers measured in the same run, each taken 3 times; the step
// fails when the median of a figure misses its goal by more than a quarter, so that a regression is caught
// by the commit that causes it and noise alone never fails it.
// - the CPU `hortus group list` takes to start, over a dependencies-only probe's of the same run (bench/cli.mjs);
// - a 304 poll's server CPU per request against a node:http hello and a Koa + router hello (bench/polling.mjs);
// - the box lane's server CPU per request against bare Node HTTPS, a new TLS connection each (bench/boxes.mjs).
// `--only=cli,polling,boxes` runs some of them; BENCH_CHECK_SECONDS (2) is the length of one load run.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { boxesTlsRounds } from './boxes.mjs';
import { CLI_GOAL_PROBES, CLI_GOAL_SECONDS, cliStart } from './cli.mjs';
import { cleanUp, createBench, log, median, root, round } from './harness.mjs';
import {
  POLL_304_GOAL_TO_KOA_HELLO,
  POLL_304_GOAL_TO_NODE_HTTP,
  pollingRoutes,
  pollRounds,
} from './polling.mjs';

const RUNS = 3;
/** A figure fails the check when it misses its goal by more than this share of the goal. */
const SLACK = 0.25;
const seconds = Number(process.env.BENCH_CHECK_SECONDS ?? 2);
const onlyArgument = process.argv.find((argument) => argument.startsWith('--only='));
const chosen = new Set((onlyArgument?.slice('--only='.length) ?? 'cli,polling,boxes').split(','));

/**
 * One checked figure: the median of its runs against its goal (`at least` or `at most`). Met, missed
 * within the slack (reported, not failed), or failed.
 */
function figure(name, runs, { atLeast, atMost, reportedOnly }) {
  const measured = median(runs);
  const goal = atLeast ?? atMost;
  const met = atLeast !== undefined ? measured >= atLeast : measured <= atMost;
  const limit = atLeast !== undefined ? atLeast * (1 - SLACK) : atMost * (1 + SLACK);
  const beyond = atLeast !== undefined ? measured < limit : measured > limit;
  const failed = beyond && reportedOnly === undefined;
  return {
    name,
    goal: `${atLeast !== undefined ? '>=' : '<='} ${goal}`,
    measured: round(measured),
    runs: runs.map((value) => round(value)),
    verdict: met
      ? 'met'
      : reportedOnly !== undefined
        ? `missed; reported, not failed: ${reportedOnly}`
        : failed
          ? `FAILED (beyond ${round(limit)})`
          : `missed, within a quarter (${round(limit)})`,
    failed,
  };
}

async function cliFigures() {
  const start = await cliStart({ rounds: RUNS });
  if (start.skipped !== undefined) {
    log(`cli: skipped, ${start.skipped}`);
    return [];
  }
  // Checked as a ratio to the probe of the same run (bench/cli.mjs): CPU-seconds alone failed on a slower
  // machine for a commit that met them the day before. The seconds are reported beside it.
  return [
    figure(
      '`hortus group list` start over the dependencies-only probe, user+sys CPU (probe ' +
        `${start.probe.cpuSeconds} s)`,
      start.groupList.samples.map((seconds, run) => seconds / (start.probe.samples[run] ?? Number.NaN)),
      { atMost: CLI_GOAL_PROBES },
    ),
    figure(
      '`hortus group list` start, user+sys CPU-seconds (node -e 0: ' + `${start.node.cpuSeconds} s)`,
      start.groupList.samples,
      { atMost: CLI_GOAL_SECONDS, reportedOnly: 'seconds depend on the machine; the ratio above is checked' },
    ),
  ];
}

async function pollingFigures(bench) {
  const [httpHello, koaHello, real] = await Promise.all([
    bench.startServer('http-hello'),
    bench.startServer('koa-hello'),
    bench.startServer('hortus', { BENCH_DEMO: 'on' }),
  ]);
  try {
    const cases = [
      { name: 'node:http hello', server: httpHello, path: '/hello', expect: 200 },
      { name: 'Koa + router hello', server: koaHello, path: '/hello', expect: 200 },
      ...pollingRoutes.map(({ route, path }) => ({
        name: `${route} 304`,
        server: real,
        path,
        expect: 304,
        conditional: true,
      })),
    ];
    const { runs } = await pollRounds(bench, cases, { rounds: RUNS, seconds, warmupSeconds: seconds });
    // Each run's ratio pairs two cases of the same round; the figure is the median over the runs.
    const perRun = (name, reference) =>
      runs.get(name).map((result, i) => runs.get(reference)[i].cpuPerRequest / result.cpuPerRequest);
    // What fails the step: every 304 run of every polled route against Koa's hello, one median of 9. A single
    // route's median of 3 swung from 0.66 to 0.94 between two quiet CI runs (Nov 29), too close to the fail line
    // to never fail by chance; a regression in the lane slows every route.
    const allRoutes = pollingRoutes.flatMap(({ route }) => perRun(`${route} 304`, 'Koa + router hello'));
    const together = figure(
      `a 304 poll of the ${pollingRoutes.length} polled routes together, server CPU per request, x Koa + router hello`,
      allRoutes,
      { atLeast: POLL_304_GOAL_TO_KOA_HELLO },
    );
    const perRoute = pollingRoutes.flatMap(({ route }) => {
      const name = `${route} 304`;
      return [
        figure(
          `a 304 poll of ${route}, server CPU per request, x node:http hello`,
          perRun(name, 'node:http hello'),
          {
            atLeast: POLL_304_GOAL_TO_NODE_HTTP,
            // Issue 38's goal, not reached on every route (0.54 to 0.78 on the loaded 2-core machine, Nov 28;
            // medians 0.71 to 0.79 and single runs 0.49 to 0.89 at load 20 to 27, Nov 29, after the lane's
            // cuts): a median of 3 can fall past the slack by noise alone. It fails the step once reached
            // with room, by removing this line.
            reportedOnly: 'the goal is not reached yet',
          },
        ),
        figure(
          `a 304 poll of ${route}, server CPU per request, x Koa + router hello`,
          perRun(name, 'Koa + router hello'),
          {
            atLeast: POLL_304_GOAL_TO_KOA_HELLO,
            reportedOnly: 'one route alone is too noisy; the routes together fail the step',
          },
        ),
      ];
    });
    return [together, ...perRoute];
  } finally {
    await Promise.all([httpHello.stop(), koaHello.stop(), real.stop()]);
  }
}

/** The box lane's goal: as many requests per server CPU second as bare Node HTTPS's, less a fifth. */
const BOX_LANE_GOAL = 0.8;

async function boxFigures(bench) {
  // One round more than counted: the first warms both servers up.
  const pairs = (await boxesTlsRounds(bench.startServer, { seconds }, RUNS + 1)).slice(1);
  return [
    figure(
      'the box lane over TLS (new connection each), server CPU per request, x bare Node HTTPS',
      pairs.map((pair) => pair.cpuRatio),
      // On the loaded 2-core machine this ratio swung from 0.59 to 0.78 between runs (Nov 28), and the Koa
      // chain instead of the lane measured 0.66 (issue 25): a median of 3 cannot tell a regression from
      // noise here, so it is printed and does not fail the step.
      { atLeast: BOX_LANE_GOAL, reportedOnly: 'too noisy on a loaded machine to fail on' },
    ),
  ];
}

async function main() {
  for (const pkg of ['core', 'adapter-memory', 'adapter-sqlite', 'http-koa', 'cli']) {
    if (!existsSync(join(root, `packages/${pkg}/dist/src/index.js`))) {
      throw new Error(`packages/${pkg} is not built: run the build first (npx pnpm@10.34.9 build)`);
    }
  }
  const bench = createBench({ smoke: false });
  const figures = [];
  const load = [];
  for (const [part, measure] of [
    ['cli', () => cliFigures()],
    ['polling', () => pollingFigures(bench)],
    ['boxes', () => boxFigures(bench)],
  ]) {
    if (!chosen.has(part)) continue;
    log(`bench:check: ${part}`);
    figures.push(...(await measure()));
    load.push(
      `${part} ${loadavg()
        .map((value) => round(value))
        .join(' ')}`,
    );
  }
  const lines = [
    `bench:check, median of ${RUNS} runs each; fails a figure missing its goal by more than ${SLACK * 100} %.`,
    `Load average after each part: ${load.join('; ')}.`,
    '',
    '| Figure | Goal | Median | Runs | Verdict |',
    '|---|---|---|---|---|',
    ...figures.map(
      (one) => `| ${one.name} | ${one.goal} | ${one.measured} | ${one.runs.join(', ')} | ${one.verdict} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const failed = figures.filter((one) => one.failed);
  if (failed.length > 0) {
    log(`bench:check failed: ${failed.map((one) => one.name).join('; ')}`);
    process.exitCode = 1;
  }
}

main().then(cleanUp, async (error) => {
  log(`bench:check failed: ${error?.stack ?? error}`);
  await cleanUp();
  process.exitCode = 1;
});
process.once('SIGINT', () => {
  cleanUp().finally(() => process.exit(130));
});
