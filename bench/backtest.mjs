// The `backtest` part of `pnpm bench`: `hortus action backtest` over 30 days of one group with 12 topics
// every 20 s (1,555,200 readings) on SQLite, every topic read by a sensor rule so every reading is
// replayed. The readings are written to a fresh data file first; the backtest then runs in a process of
// its own (its CPU time and peak RSS are the backtest's alone), streaming the readings from the store.
// Figures only; no test depends on them. Goal (issue 34): <= 5 s on one core.
//
//   node bench/backtest.mjs [--smoke] [--days=30]
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { promisify } from 'node:util';

export const BACKTEST_GOAL_SECONDS = 5;
const INTERVAL_MS = 20_000;
const START = Date.UTC(2026, 9, 1);
const GROUP = 'backtest';
const root = fileURLToPath(new URL('..', import.meta.url));
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const log = (line) => process.stderr.write(`${line}\n`);

const TOPICS = [
  'esp/air/temperature',
  'esp/air/humidity',
  'esp/ground/moisture/1',
  'esp/ground/moisture/2',
  'esp/ground/moisture/3',
  'esp/ground/light/lux',
  'esp/air/pressure',
  'esp/air/co2',
  'esp/ground/water',
  'esp/extra/1',
  'esp/extra/2',
  'esp/extra/3',
];

/** Eight actions; their sensor rules read every topic (two each at most), with every kind of limit. */
const sensor = (topic, condition, value, action) => ({
  action,
  sensor: topic,
  condition,
  value: String(value),
});
const ACTIONS = [
  ['heater_1', [sensor(TOPICS[0], 'less than', 18, 'on'), sensor(TOPICS[0], 'above', 21, 'off')], {}],
  ['ventilator_1', [sensor(TOPICS[0], 'above', 26, 'on'), sensor(TOPICS[1], 'less than', 55, 'off')], {}],
  ['pump_1', [sensor(TOPICS[2], 'less than', 40, 'on'), sensor(TOPICS[2], 'above', 60, 'off')], {}],
  ['pump_2', [sensor(TOPICS[3], 'less than', 40, 'on'), sensor(TOPICS[4], 'above', 60, 'off')], {}],
  [
    'led_1',
    [sensor(TOPICS[5], 'less than', 40, 'on'), sensor(TOPICS[5], 'above', 60, 'off')],
    { time: true },
  ],
  ['ventilator_2', [sensor(TOPICS[7], 'above', 60, 'on'), sensor(TOPICS[6], 'less than', 40, 'off')], {}],
  ['valve_1', [sensor(TOPICS[8], 'less than', 40, 'on'), sensor(TOPICS[9], 'above', 60, 'off')], {}],
  ['mister_1', [sensor(TOPICS[10], 'less than', 40, 'on'), sensor(TOPICS[11], 'above', 60, 'off')], {}],
];

async function loadPackages() {
  const require = createRequire(join(root, 'packages/core/package.json'));
  await import(pathToFileURL(require.resolve('reflect-metadata')).href);
  const load = (pkg) => import(pathToFileURL(join(root, `packages/${pkg}/dist/src/index.js`)).href);
  const [core, sqlite] = await Promise.all(['core', 'adapter-sqlite'].map(load));
  const { Container } = await import(pathToFileURL(require.resolve('inversify')).href);
  return { core, sqlite, Container };
}

async function openApp(file, clockAt) {
  const { core, sqlite, Container } = await loadPackages();
  const store = await sqlite.SqliteStore.open({ file });
  const container = new Container();
  container.load(
    core.createCoreModule(
      { timeZone: 'Europe/Berlin', commitsCacheMs: 60_000 },
      { now: () => new Date(clockAt) },
    ),
    store.module(),
  );
  return { core, store, get: (token) => container.get(token) };
}

/** A value of topic `index` at `at`: a daily swing and a faster one, through the rules' thresholds. */
function valueOf(index, at) {
  const hours = (at - START) / 3_600_000;
  const base = index === 0 ? 21 : index === 1 ? 60 : 50;
  const swing = index <= 1 ? 6 : 16;
  const value =
    base +
    swing * Math.sin((2 * Math.PI * hours) / 24 + index) +
    4 * Math.sin((2 * Math.PI * hours) / 1.7 + index);
  return Math.round(value * 100) / 100;
}

async function seed(file, days) {
  const app = await openApp(file, START);
  try {
    const { core } = app;
    await app.get(core.CreateGroup).execute({ name: GROUP, settings: [{ timeZone: 'Europe/Berlin' }] });
    for (const [object, sensorAutomations, options] of ACTIONS) {
      const timeAutomations = options.time
        ? [
            { action: 'on', time: '06:00', frequency: 'every day' },
            { action: 'off', time: '20:00', frequency: 'every day' },
          ]
        : [];
      await app.get(core.CreateAction).execute({
        group: GROUP,
        object,
        value: 'off',
        automations: [{ timeAutomations, sensorAutomations }],
      });
      await app
        .get(core.SetActionLimit)
        .execute({ group: GROUP, object, maxOnMs: 2 * 3_600_000, minOnMs: 120_000, minOffMs: 300_000 });
    }
    const readings = app.get(core.READING_REPOSITORY);
    const end = START + days * 86_400_000;
    let batch = [];
    let count = 0;
    for (let at = START; at < end; at += INTERVAL_MS) {
      // A box that goes quiet for 40 minutes every third day: safe mode.
      const quiet = (at - START) % (3 * 86_400_000) < 2_400_000 && at - START >= 86_400_000;
      for (let index = 0; index < TOPICS.length; index += 1) {
        if (quiet && index < 2) continue;
        batch.push({
          group: GROUP,
          topic: TOPICS[index],
          value: valueOf(index, at),
          time: new Date(at + index * 1_000),
        });
      }
      if (batch.length >= 6_000) {
        count += await readings.add(batch);
        batch = [];
      }
    }
    if (batch.length > 0) count += await readings.add(batch);
    return { readings: count, from: new Date(START).toISOString(), to: new Date(end).toISOString() };
  } finally {
    await app.store.close();
  }
}

/** The child: one backtest over the seeded file, measured. */
async function child(file, from, to) {
  const app = await openApp(file, Date.parse(to) + 3_600_000);
  try {
    const backtest = app.get(app.core.BacktestAutomations);
    const rssBefore = process.memoryUsage().rss;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await backtest.execute({ group: GROUP, from, to });
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    process.stdout.write(
      `${JSON.stringify({
        seconds: round(seconds, 2),
        cpuSeconds: round((used.user + used.system) / 1e6, 2),
        maxRssMb: round(process.resourceUsage().maxRSS / 1024, 0),
        rssBeforeMb: round(rssBefore / 1024 / 1024, 0),
        readings: result.readings,
        evaluations: result.evaluations,
        switches: result.switches.length,
        triggers: [...new Set(result.switches.map((s) => s.trigger))].sort(),
      })}\n`,
    );
  } finally {
    await app.store.close();
  }
}

export async function backtestPart({ smoke, days = smoke ? 0.25 : 30 }) {
  const directory = await mkdtemp(join(tmpdir(), 'hortus-bench-backtest-'));
  try {
    const file = join(directory, 'hortus.db');
    const seedStarted = performance.now();
    const seeded = await seed(file, days);
    log(
      `  backtest: ${seeded.readings} readings seeded in ${round((performance.now() - seedStarted) / 1000, 1)} s`,
    );
    const load = loadavg().map((value) => round(value, 2));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        ...(process.env.BENCH_BACKTEST_PROF
          ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_BACKTEST_PROF]
          : []),
        fileURLToPath(import.meta.url),
        `--child=${file}`,
        seeded.from,
        seeded.to,
      ],
      { maxBuffer: 1024 * 1024 },
    );
    return { days, topics: TOPICS.length, actions: ACTIONS.length, loadAverage: load, ...JSON.parse(stdout) };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export function backtestTargets(figures) {
  if (figures === undefined) return [];
  return [
    {
      name: `Backtest, ${figures.days} days, ${figures.topics} topics every 20 s (${figures.readings} readings), SQLite`,
      goal: `<= ${BACKTEST_GOAL_SECONDS} s on one core`,
      measured: `CPU ${figures.cpuSeconds} s (wall ${figures.seconds} s), peak RSS ${figures.maxRssMb} MB`,
      // One core's worth: the CPU time, which a loaded machine does not stretch as it does the wall time.
      met: figures.cpuSeconds <= BACKTEST_GOAL_SECONDS,
    },
  ];
}

export function backtestMarkdown(figures) {
  if (figures === undefined) return [];
  return [
    '',
    `Backtest (\`hortus action backtest\`, SQLite, in a process of its own; load average ${figures.loadAverage.join(' ')}): ` +
      `${figures.readings} readings of ${figures.topics} topics over ${figures.days} days through ${figures.actions} actions' rules, ` +
      `${figures.evaluations} evaluations, ${figures.switches} switches (${figures.triggers.join(', ')}): ` +
      `${figures.seconds} s, CPU ${figures.cpuSeconds} s, peak RSS ${figures.maxRssMb} MB (${figures.rssBeforeMb} MB before it began).`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const childFile = process.argv
    .find((argument) => argument.startsWith('--child='))
    ?.slice('--child='.length);
  if (childFile !== undefined) {
    const [from, to] = process.argv.slice(-2);
    await child(childFile, from, to);
  } else {
    const days = process.argv.find((argument) => argument.startsWith('--days='))?.slice('--days='.length);
    const figures = await backtestPart({
      smoke: process.argv.includes('--smoke'),
      ...(days === undefined ? {} : { days: Number(days) }),
    });
    process.stdout.write(`${backtestMarkdown(figures).join('\n').trim()}\n`);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  }
}
