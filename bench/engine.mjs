// The `engine` part of `pnpm bench`: what the automation engine costs with many groups of which few change.
// 10,000 groups (one action each, a time rule and a sensor rule, alert ranges, a recent reading); before
// each tick 1 % of them receive a reading. The engine runs in this process on a simulated clock (10 s per
// tick, the default AUTOMATION_TICK_MS), so the ticks run back to back: CPU % of a core is the CPU time
// of the ticks over the simulated time they stand for. Store calls are counted at the repository ports.
// Figures only; no test depends on them.
//
//   node bench/engine.mjs [--smoke] [--stores=memory,sqlite,mongo] [--root=<checkout>]
// --root measures another built checkout (the code before a change) with this same script.
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { benchMongoBackends, benchMongoServer } from './ferretdb.mjs';

const TICK_MS = 10_000;
const ACTIVE_SHARE = 0.01;
/** The goal of issue 26: the engine on the embedded store uses at most this share of a core. */
export const ENGINE_GOAL_PERCENT = 2;
const START = Date.UTC(2026, 5, 10, 0, 0, 30);

const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const log = (line) => process.stderr.write(`${line}\n`);

async function loadPackages(root) {
  const require = createRequire(join(root, 'packages/core/package.json'));
  await import(pathToFileURL(require.resolve('reflect-metadata')).href);
  const load = (pkg) => import(pathToFileURL(join(root, `packages/${pkg}/dist/src/index.js`)).href);
  const [core, memory, sqlite, mongo] = await Promise.all(
    ['core', 'adapter-memory', 'adapter-sqlite', 'adapter-mongo'].map(load),
  );
  const { Container, ContainerModule } = await import(pathToFileURL(require.resolve('inversify')).href);
  return { core, memory, sqlite, mongo, Container, ContainerModule };
}

class SimulatedClock {
  at = START;
  now() {
    return new Date(this.at);
  }
}

/** Every port the engine may call: the repositories and, where the code has it, the change feed. */
function portTokens(core) {
  return Object.entries(core)
    .filter(
      ([name, value]) => typeof value === 'symbol' && (/_REPOSITORY$/u.test(name) || name === 'CHANGE_FEED'),
    )
    .map(([name, token]) => ({ name, token }));
}

/** An engine in a container of its own over `storeModule`, each port call counted. */
function engineOver(packages, storeModule, clock) {
  const { core, Container, ContainerModule } = packages;
  const container = new Container();
  const calls = new Map();
  const scheduler = {
    every: () => {
      throw new Error('the bench drives ticks by hand');
    },
  };
  container.load(
    core.createCoreModule({ timeZone: 'UTC', commitsCacheMs: 60_000 }, clock),
    storeModule,
    new ContainerModule(({ bind }) => {
      bind(core.SCHEDULER).toConstantValue(scheduler);
    }),
  );
  for (const { name, token } of portTokens(core)) {
    if (!container.isBound(token)) continue;
    container.onActivation(token, (_context, port) => countingProxy(port, name, calls));
  }
  return {
    engine: container.get(core.AutomationEngine),
    repository: (token) => container.get(token),
    calls,
  };
}

function countingProxy(port, name, calls) {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args) => {
        const key = `${name.replace(/_REPOSITORY$/u, '').toLowerCase()}.${String(property)}`;
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
}

const topics = ['esp/air/temperature', 'esp/air/humidity', 'esp/ground/moisture/1'];

function readingsOf(group, at, salt) {
  return topics.map((topic, index) => ({
    group,
    topic,
    value: 20 + ((salt + index) % 5),
    time: new Date(at),
  }));
}

/** Groups seeded per chunk: their readings go to the store in one batch, as a box lane's batches do. */
const SEED_CHUNK = 500;

async function seed(repositories, groups, clock, concurrency) {
  const names = Array.from({ length: groups }, (_, index) => `g${String(index).padStart(5, '0')}`);
  for (let start = 0; start < names.length; start += SEED_CHUNK) {
    const chunk = names.slice(start, start + SEED_CHUNK);
    let next = 0;
    const worker = async () => {
      for (let offset = next++; offset < chunk.length; offset = next++) {
        const name = chunk[offset];
        const index = start + offset;
        await repositories.groups.create({
          name,
          package: 'small',
          employee: [],
          settings: [{ tempMin: 10 }, { tempMax: 35 }],
        });
        // Already what its latest slot says, so the first evaluation switches nothing.
        await repositories.actions.create({
          group: name,
          object: 'pump',
          value: 'on',
          automations: [
            {
              timeAutomations: [
                { action: 'on', time: `${String(index % 24).padStart(2, '0')}:00`, frequency: 'every day' },
              ],
              sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '30' }],
            },
          ],
        });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    // One batch for the chunk: a reading batch per group made seeding 10,000 groups on the test MongoDB
    // take over half an hour; the ticks measured afterwards are the same either way.
    await repositories.readings.add(
      chunk.flatMap((name, offset) => readingsOf(name, clock.at, start + offset)),
    );
    log(`  seeded ${start + chunk.length} of ${names.length} groups`);
  }
  return names;
}

/**
 * Ticks the engine `ticks` times after `warmup` ticks, 1 % of the groups receiving readings before each
 * (or none when `idle`), and answers the CPU and the port calls per tick.
 */
async function measureTicks({ engine, calls }, repositories, names, clock, { ticks, warmup, idle = false }) {
  const active = names.filter((_, index) => index % Math.round(1 / ACTIVE_SHARE) === 0);
  let cpuMicros = 0;
  let wallMs = 0;
  let evaluated = 0;
  let portCalls = 0;
  const perPort = new Map();
  for (let tick = 0; tick < warmup + ticks; tick += 1) {
    clock.at += TICK_MS;
    if (!idle) {
      // One batch for all of them: what the engine then sees is the same as from a post per group.
      await repositories.readings.add(active.flatMap((name) => readingsOf(name, clock.at, tick)));
    }
    calls.clear();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await engine.tick();
    const used = process.cpuUsage(cpu);
    if (tick < warmup) continue;
    wallMs += performance.now() - started;
    cpuMicros += used.user + used.system;
    evaluated += result.evaluated?.length ?? names.length;
    for (const [key, count] of calls) {
      portCalls += count;
      perPort.set(key, (perPort.get(key) ?? 0) + count);
    }
  }
  return {
    ticks,
    activeGroups: idle ? 0 : active.length,
    cpuPercentOfCore: round((cpuMicros / 1000 / (ticks * TICK_MS)) * 100, 3),
    cpuMsPerTick: round(cpuMicros / 1000 / ticks, 1),
    wallMsPerTick: round(wallMs / ticks, 1),
    groupsEvaluatedPerTick: round(evaluated / ticks, 1),
    storeCallsPerTick: round(portCalls / ticks, 1),
    storeCallsByPort: Object.fromEntries([...perPort].map(([key, count]) => [key, round(count / ticks, 1)])),
  };
}

async function storeRun(packages, kind, { groups, ticks, warmup, root, backend }) {
  const clock = new SimulatedClock();
  let module;
  let close = async () => {};
  let serverKind;
  if (kind === 'memory') {
    module = packages.memory.memoryStoreModule();
  } else if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'hortus-bench-engine-'));
    const store = await packages.sqlite.SqliteStore.open({ file: join(dir, 'hortus.db') });
    module = store.module();
    close = async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    };
  } else {
    const server = await benchMongoServer(root, backend);
    if (server === undefined) return { skipped: 'no MONGODB_URI and no tools/ferretdb/bin/ferretdb-test' };
    serverKind = server.kind;
    const dbName = `hortus_bench_engine_${process.pid}`;
    const store = packages.mongo.MongoStore.fromSettings({
      uri: server.uri,
      dbName,
      operationTimeoutMS: 60_000,
    });
    await store.start();
    module = store.module();
    close = async () => {
      await store.db.dropDatabase();
      await store.close();
      await server.stop();
    };
  }
  try {
    const app = engineOver(packages, module, clock);
    const { core } = packages;
    const repositories = {
      groups: app.repository(core.GROUP_REPOSITORY),
      actions: app.repository(core.ACTION_REPOSITORY),
      readings: app.repository(core.READING_REPOSITORY),
    };
    const seedStarted = performance.now();
    const names = await seed(repositories, groups, clock, kind === 'mongo' ? 16 : 1);
    log(
      `  engine ${kind}: ${groups} groups seeded in ${round((performance.now() - seedStarted) / 1000, 1)} s`,
    );
    const load = loadavg().map((value) => round(value, 2));
    const busy = await measureTicks(app, repositories, names, clock, { ticks, warmup });
    const idle = await measureTicks(app, repositories, names, clock, {
      ticks: Math.min(ticks, 5),
      warmup: 0,
      idle: true,
    });
    return {
      groups,
      loadAverage: load,
      busy,
      idle,
      ...(serverKind === undefined ? {} : { server: serverKind }),
    };
  } finally {
    await close();
  }
}

/** The MongoDB runs: one per FerretDB backend (BENCH_FERRETDB_BACKEND), or one on a given server. */
function mongoRuns() {
  return benchMongoBackends().map((backend) => ({
    key: backend === undefined ? 'mongo' : `mongo-${backend}`,
    backend,
  }));
}

/** Runs the part on each store; `stores` names them (memory, sqlite, mongo). */
export async function enginePart({
  smoke,
  stores = ['memory', 'sqlite', 'mongo'],
  root = fileURLToPath(new URL('..', import.meta.url)),
}) {
  const packages = await loadPackages(root);
  const changeDriven = typeof packages.core.CHANGE_FEED === 'symbol';
  const results = { changeDriven, tickMs: TICK_MS, activeShare: ACTIVE_SHARE };
  const runs = stores.flatMap((kind) =>
    kind === 'mongo' ? mongoRuns() : [{ key: kind, backend: undefined }],
  );
  for (const { key, backend } of runs) {
    const kind = key.startsWith('mongo') ? 'mongo' : key;
    // FerretDB v1 takes a good part of a second per write on the loaded test machine: the MongoDB run
    // has fewer groups (an idle tick's calls do not depend on their number; BENCH_ENGINE_MONGO_GROUPS).
    const mongoGroups = Number(process.env.BENCH_ENGINE_MONGO_GROUPS ?? (smoke ? 10 : 300));
    const groups = kind === 'mongo' ? mongoGroups : smoke ? 200 : 10_000;
    // Before the change every tick reads every group: fewer ticks keep that run in minutes.
    const ticks = smoke ? 2 : changeDriven ? 30 : kind === 'mongo' ? 2 : 5;
    results[key] = await storeRun(packages, kind, { groups, ticks, warmup: smoke ? 1 : 3, root, backend });
  }
  return results;
}

/** The measured stores of the part's results: [key, figures], memory and SQLite first. */
function measuredStores(engine) {
  return Object.entries(engine).filter(
    ([key, figures]) => /^(memory|sqlite|mongo)/u.test(key) && typeof figures === 'object',
  );
}

export function engineTargets(engine) {
  if (engine === undefined) return [];
  const targets = [];
  for (const [key, figures] of measuredStores(engine)) {
    if (figures.skipped !== undefined) continue;
    if (key.startsWith('mongo')) {
      targets.push({
        name: `Engine on MongoDB (${figures.server}), idle tick, ${figures.groups} groups (store calls)`,
        goal: 'no per-group work',
        measured: `${figures.idle.storeCallsPerTick} calls, ${figures.idle.groupsEvaluatedPerTick} groups evaluated`,
        met: figures.idle.groupsEvaluatedPerTick === 0 && figures.idle.storeCallsPerTick < 10,
      });
    } else {
      targets.push({
        name: `Engine, ${figures.groups} groups, 1 % receiving readings, ${key} (CPU of a core)`,
        goal: `<= ${ENGINE_GOAL_PERCENT} %`,
        measured: `${figures.busy.cpuPercentOfCore} %`,
        met: figures.busy.cpuPercentOfCore <= ENGINE_GOAL_PERCENT,
      });
    }
  }
  return targets;
}

export function engineMarkdown(engine) {
  if (engine === undefined) return [];
  const lines = [
    '',
    `Automation engine (${engine.changeDriven ? 'driven by changes' : 'every group at every tick'}; simulated ` +
      `${engine.tickMs / 1000} s ticks; 1 % of the groups receive 3 readings before each busy tick):`,
    '',
    '| Store | Groups | Load avg | Busy tick: CPU % of a core | CPU ms | groups evaluated | store calls | Idle tick: groups evaluated | store calls |',
    '| ----- | -----: | -------- | -------------------------: | -----: | ---------------: | ----------: | --------------------------: | ----------: |',
  ];
  for (const [key, figures] of measuredStores(engine)) {
    if (figures.skipped !== undefined) {
      lines.push(`| ${key} | skipped: ${figures.skipped} | | | | | | | |`);
      continue;
    }
    const { busy, idle } = figures;
    lines.push(
      `| ${figures.server ?? key} | ${figures.groups} | ${figures.loadAverage.join(' ')} | ${busy.cpuPercentOfCore} | ${busy.cpuMsPerTick} | ` +
        `${busy.groupsEvaluatedPerTick} | ${busy.storeCallsPerTick} | ${idle.groupsEvaluatedPerTick} | ${idle.storeCallsPerTick} |`,
    );
  }
  return lines;
}

// `node bench/engine.mjs [--smoke] [--stores=...] [--root=...]` measures this part alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const option = (name) => process.argv.find((argument) => argument.startsWith(`--${name}=`))?.split('=')[1];
  const engine = await enginePart({
    smoke: process.argv.includes('--smoke'),
    stores: option('stores')?.split(',') ?? undefined,
    root: option('root') ?? fileURLToPath(new URL('..', import.meta.url)),
  });
  process.stdout.write(`${engineMarkdown(engine).join('\n').trim()}\n`);
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(engine, null, 2)}\n`);
}
