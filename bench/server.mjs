// One server under test, in its own process so that the load generator never shares its event loop.
// Started by run.mjs with fork(): `node --expose-gc bench/server.mjs <kind>`, settings in BENCH_* variables.
// It answers on the IPC channel: {type: 'ready', url} once listening, {type: 'memory', ...} when asked.
import { createRequire } from 'node:module';
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pathToFileURL, URL } from 'node:url';
import { BOX_TOPICS, quietValue } from './box.mjs';

const fromHttpKoa = createRequire(new URL('../packages/http-koa/package.json', import.meta.url));
const load = (name) => import(pathToFileURL(fromHttpKoa.resolve(name)).href);
const hortus = (pkg) => import(new URL(`../packages/${pkg}/dist/src/index.js`, import.meta.url).href);

const kind = process.argv[2];
const env = process.env;
const DAY_MS = 86_400_000;

/** The store's memory after a full collection: the heap and the typed-array columns are reported apart. */
function memory() {
  globalThis.gc?.();
  globalThis.gc?.();
  const { heapUsed, arrayBuffers, external, rss } = process.memoryUsage();
  return { heapUsed, arrayBuffers, external, rss };
}

function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function urlOf(server) {
  return `http://127.0.0.1:${server.address().port}`;
}

/** Readings straight into the repository (not over HTTP): seeding ten million must take seconds. */
async function seedReadings(repository, group, topics, perTopic, stepMs, endMs) {
  const batchSize = 100_000;
  for (const topic of topics) {
    for (let first = 0; first < perTopic; first += batchSize) {
      const batch = [];
      const last = Math.min(perTopic, first + batchSize);
      for (let i = first; i < last; i += 1) {
        const time = endMs - (perTopic - 1 - i) * stepMs;
        batch.push({ group, topic, value: 20 + 5 * Math.sin(i / 500) + (i % 7) / 10, time: new Date(time) });
      }
      await repository.add(batch);
    }
  }
}

let groupSeeder;
/** Groups seeded at a time: each group's writes wait on the store's round trips, not on this process. */
const SEED_CONCURRENCY = 8;
let seededGroups = 0;

/**
 * Groups bench-<from> .. bench-<count-1> as the capacity part's web clients see them: the group record, an hour of
 * readings of one box (12 per topic) and one open notification. Straight into the repositories: the demo
 * seeding stores a day per group, which the test MongoDB would take minutes to take in.
 */
async function seedGroups(container, tokens, from, count) {
  const groups = container.get(tokens.GROUP_REPOSITORY);
  const readings = container.get(tokens.READING_REPOSITORY);
  const notifications = container.get(tokens.NOTIFICATION_REPOSITORY);
  const end = Math.floor(Date.now() / 300_000) * 300_000;
  let next = from;
  const worker = async () => {
    for (let g = next++; g < count; g = next++) await seedGroup(groups, readings, notifications, g, end);
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
}

/** One group of seedGroups. */
async function seedGroup(groups, readings, notifications, g, end) {
  const group = `bench-${g}`;
  await groups.create({
    name: group,
    package: 'small',
    employee: [`bench-${g}`],
    settings: [{ tempMin: 15 }, { tempMax: 30 }, { moistureMin: 30 }, { moistureMax: 70 }],
  });
  await notifications.create({
    group,
    time: new Date(end),
    message: 'Bench: soil moisture of sensor 3 is below its minimum',
    topic: 'esp/ground/moisture/3',
    value: 29.5,
  });
  const batch = [];
  for (let i = 0; i < 12; i += 1) {
    const time = new Date(end - (11 - i) * 300_000);
    for (const [t, topic] of BOX_TOPICS.entries())
      batch.push({ group, topic, value: quietValue(topic, t) + i / 10, time });
  }
  await readings.add(batch);
}

/**
 * The boxes part's devices: `count` boxes registered in groups box-0 .. (two a group), each group with the
 * four relays the firmware switches, each box onboarded as the firmware does (so it holds its own api-key).
 * Answers what the generator needs: each box's group and key.
 */
async function provisionBoxes(container, count) {
  const { CreateAction, CreateDevice, GROUP_REPOSITORY, OnboardBox, boxIdOfMac, macOfRegisteredId } =
    await hortus('core');
  const groups = container.get(GROUP_REPOSITORY);
  const createDevice = container.get(CreateDevice);
  const createAction = container.get(CreateAction);
  const onboard = container.get(OnboardBox);
  const boxes = [];
  for (let i = 0; i < count; i += 1) {
    const group = `box-${Math.floor(i / 2)}`;
    if (i % 2 === 0) {
      await groups.create({ name: group, package: 'small', employee: [], settings: [] });
      for (const relay of ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'])
        await createAction.execute({ group, object: relay, value: relay === 'pump_1' ? 'on' : 'off' });
    }
    const label =
      `24:6F:28:${(0xa0 + (i >> 8)).toString(16)}:${(i & 0xff).toString(16).padStart(2, '0')}:01`.toUpperCase();
    await createDevice.execute({ deviceId: label, group, type: 'box' });
    const outcome = await onboard.execute({
      deviceId: boxIdOfMac(macOfRegisteredId(label)),
      firmwareVersion: '1.0.4',
      lastActive: '4200',
      address: '127.0.0.1',
    });
    if (!outcome.registered) throw new Error(`bench box ${label} was refused onboarding: ${outcome.reason}`);
    boxes.push({ group, apiKey: outcome.apiKey });
  }
  return boxes;
}

async function hortusServer() {
  await import(pathToFileURL(fromHttpKoa.resolve('reflect-metadata')).href);
  const { createContainer, createJsonLogger, loadConfig, startServer } = await hortus('cli');
  const { GROUP_REPOSITORY, NOTIFICATION_REPOSITORY, READING_REPOSITORY, STORE_LIFECYCLE } =
    await hortus('core');
  // Only what is named here: an MQTT_URL or STORE of the calling shell must not change the server under test.
  const variables = {
    PORT: '0',
    HOST: '127.0.0.1',
    // The limiter stays on (its cost is measured) with an allowance the load generator cannot exhaust: at
    // 1,000,000 a minute (16,667/s) a quiet 2-core machine's wrk ran out of tokens and the 304 check failed.
    RATE_LIMIT_PER_MINUTE: '100000000',
    // BENCH_RATE_LIMIT_REDIS_URL counts that limit in Redis (what a shared limit costs per request).
    ...(env.BENCH_RATE_LIMIT_REDIS_URL === undefined
      ? {}
      : { RATE_LIMIT_REDIS_URL: env.BENCH_RATE_LIMIT_REDIS_URL }),
    // BENCH_POLL_LANE=off measures every request through the Koa middleware chain (a before/after figure).
    ...(env.BENCH_POLL_LANE === undefined ? {} : { POLL_LANE: env.BENCH_POLL_LANE }),
    // The capacity part holds one connection per simulated client, far beyond the default 1024, all from the
    // generator's one address (whose default share is a quarter: beyond it connections were reset).
    ...(env.BENCH_MAX_CONNECTIONS === undefined
      ? {}
      : {
          MAX_CONNECTIONS: env.BENCH_MAX_CONNECTIONS,
          MAX_CONNECTIONS_PER_ADDRESS: env.BENCH_MAX_CONNECTIONS,
        }),
    // The boxes part: HTTPS too, with the certificate TLS=self-signed keeps in BENCH_TLS_DIR.
    ...(env.BENCH_TLS_DIR === undefined
      ? {}
      : { TLS: 'self-signed', HTTPS_PORT: '0', HORTUS_DATA_DIR: env.BENCH_TLS_DIR }),
    ...(env.BENCH_MONGODB_URI !== undefined
      ? {
          STORE: 'mongodb',
          MONGODB_URI: env.BENCH_MONGODB_URI,
          MONGODB_DB: env.BENCH_MONGODB_DB,
          ...(env.BENCH_MONGODB_TIMEOUT_MS === undefined
            ? {}
            : { MONGODB_TIMEOUT_MS: env.BENCH_MONGODB_TIMEOUT_MS }),
        }
      : env.BENCH_DATA_DIR !== undefined
        ? { STORE: 'sqlite', HORTUS_DATA_DIR: env.BENCH_DATA_DIR }
        : { STORE: 'memory' }),
  };
  const config = loadConfig(variables);
  // Production logging: one JSON line per request on stdout, which run.mjs points at /dev/null.
  const logger = createJsonLogger();
  const container = await createContainer(config, { logger });
  // The embedded store opens its file at start, MongoDB connects; seeding writes through them, so start first.
  if (config.store !== 'memory') await container.get(STORE_LIFECYCLE).start();
  const before = memory();
  const seeded = Number(env.BENCH_SEED_READINGS ?? 0);
  if (seeded > 0) {
    const topics = Array.from({ length: 10 }, (_, i) => `esp/bench/${i}`);
    const started = performance.now();
    await seedReadings(
      container.get(READING_REPOSITORY),
      'bench-latest',
      topics,
      Math.ceil(seeded / topics.length),
      1000,
      Date.now(),
    );
    process.send({ type: 'seeded', readings: seeded, seconds: (performance.now() - started) / 1000 });
  }
  const historyDays = Number(env.BENCH_HISTORY_DAYS ?? 0);
  if (historyDays > 0) {
    const step = 20_000;
    const perTopic = Math.floor((historyDays * DAY_MS) / step);
    await seedReadings(
      container.get(READING_REPOSITORY),
      'bench-history',
      ['esp/air/temperature'],
      perTopic,
      step,
      Date.now(),
    );
  }
  // The capacity part adds groups before each step ({type: 'groups', count}): as many as its clients watch.
  // BENCH_SEED_MONGODB_TIMEOUT_MS: the groups go in through a connection of their own with that deadline, as
  // an import beside the server would. On FerretDB-SQLite, which serializes writes, a seeding batch queued
  // behind the boxes' posts ran past the production deadline and ended the steps after 1,000 clients.
  let seeding = container;
  if (config.store === 'mongodb' && env.BENCH_SEED_MONGODB_TIMEOUT_MS !== undefined) {
    seeding = await createContainer(
      loadConfig({ ...variables, MONGODB_TIMEOUT_MS: env.BENCH_SEED_MONGODB_TIMEOUT_MS }),
      { logger },
    );
    await seeding.get(STORE_LIFECYCLE).start();
  }
  groupSeeder = async (count) => {
    const started = performance.now();
    const from = seededGroups;
    seededGroups = Math.max(seededGroups, count);
    await seedGroups(seeding, { GROUP_REPOSITORY, NOTIFICATION_REPOSITORY, READING_REPOSITORY }, from, count);
    process.send({ type: 'groups', count: seededGroups, seconds: (performance.now() - started) / 1000 });
  };
  const boxes =
    Number(env.BENCH_BOXES ?? 0) > 0 ? await provisionBoxes(container, Number(env.BENCH_BOXES)) : [];
  const after = memory();
  // BENCH_ANSWER_CACHE=off: the answer cache keeps nothing, so every full answer is built and serialised (the
  // polling part's "cache missed" cases, so that a full answer's figure cannot come from the cache alone).
  if (env.BENCH_ANSWER_CACHE === 'off') {
    const { AnswerCache } = await import(
      new URL('../packages/http-koa/dist/src/exchange/answer.js', import.meta.url).href
    );
    AnswerCache.prototype.get = () => undefined;
    AnswerCache.prototype.set = () => {};
  }
  const running = await startServer(config, { container, logger, demo: env.BENCH_DEMO === 'on' });
  if (env.BENCH_ACCOUNT !== undefined) {
    // One account on the demo group, for the log-in case: its password arrives in BENCH_ACCOUNT.
    const { CreateUser } = await hortus('core');
    await container.get(CreateUser).execute({
      firstName: 'Bench',
      lastName: 'User',
      email: 'bench@example.org',
      group: 'demo',
      password: env.BENCH_ACCOUNT,
    });
  }
  return {
    url: running.url,
    ...(running.httpsUrl === undefined ? {} : { httpsUrl: running.httpsUrl }),
    ...(boxes.length === 0 ? {} : { boxes }),
    memory: { before, after },
  };
}

/**
 * A bare Node HTTPS server answering the box endpoint's requests (insertOne, find) as Hortus answers them
 * but checking and storing nothing:
 * the same certificate (the one Hortus created in BENCH_TLS_DIR) and the same answer, so the difference is
 * Hortus's own work per request.
 */
async function httpsBareServer() {
  const { readFileSync } = await import('node:fs');
  const { createServer: createHttpsServer } = await import('node:https');
  const directory = `${env.BENCH_TLS_DIR}/tls`;
  const server = createHttpsServer({
    cert: readFileSync(`${directory}/self-signed-cert.pem`),
    key: readFileSync(`${directory}/self-signed-key.pem`),
  });
  // The four relays of a group, as Hortus's find answers them.
  const documents = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'].map((object, index) => ({
    _id: `a${index}`,
    group: 'box-0',
    object,
    value: index === 0 ? 'on' : 'off',
    automations: [],
  }));
  let inserted = 0;
  server.on('request', (request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      // Parsed as Hortus parses it; the answer is the box endpoint's, nothing is kept.
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const find = request.url?.endsWith('/action/find') === true;
      inserted += find ? 0 : 1;
      const answer = find ? { documents } : { insertedId: `${body.document?.topic}-${inserted}` };
      response.writeHead(find ? 200 : 201, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `https://127.0.0.1:${server.address().port}` };
}

/** The same three polling routes on Koa and @koa/router with no middleware at all: the framework's limit. */
async function koaRoutesServer() {
  await import(pathToFileURL(fromHttpKoa.resolve('reflect-metadata')).href);
  const { default: Koa } = await load('koa');
  const { Router } = await load('@koa/router');
  const { createContainer, loadConfig } = await hortus('cli');
  const { withUnderscoreId } = await hortus('http-koa');
  const { silentLogger, GetActionsOfGroup, GetGroup, GetLatestReadingsOfGroup, SeedDemo } =
    await hortus('core');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', STORE: 'memory', AUTOMATIONS: 'off' });
  const container = await createContainer(config, { logger: silentLogger });
  await container.get(SeedDemo).execute();
  const [actions, readings, groups] = [GetActionsOfGroup, GetLatestReadingsOfGroup, GetGroup].map((useCase) =>
    container.get(useCase),
  );
  const router = new Router();
  router.get('/api/actions/current_state', async (ctx) => {
    ctx.body = { message: (await actions.execute({ group: ctx.query.group })).map(withUnderscoreId) };
  });
  router.get('/api/data/latestdata/All', async (ctx) => {
    ctx.body = (await readings.execute({ group: ctx.query.groupId })).map(withUnderscoreId);
  });
  router.get('/api/group/abo', async (ctx) => {
    ctx.body = withUnderscoreId(await groups.execute({ name: ctx.query.group }));
  });
  const app = new Koa();
  app.use(router.routes());
  const server = await listen(app.callback());
  return { url: urlOf(server) };
}

async function koaHelloServer() {
  const { default: Koa } = await load('koa');
  const { Router } = await load('@koa/router');
  const router = new Router();
  router.get('/hello', (ctx) => {
    ctx.body = 'hello';
  });
  const app = new Koa();
  app.use(router.routes());
  const server = await listen(app.callback());
  return { url: urlOf(server) };
}

async function httpHelloServer() {
  const server = await listen((request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    response.end('hello');
  });
  return { url: urlOf(server) };
}

const servers = {
  hortus: hortusServer,
  'koa-routes': koaRoutesServer,
  'koa-hello': koaHelloServer,
  'http-hello': httpHelloServer,
  'https-bare': httpsBareServer,
};

process.on('message', (message) => {
  if (message?.type === 'groups') {
    // A store too slow to take the groups in (the test MongoDB under load) is reported, not a crash.
    groupSeeder(message.count).catch((error) =>
      process.send({
        type: 'groups',
        error: `${error?.message ?? error} (${error?.cause?.message ?? 'no cause'})`,
      }),
    );
  }
  if (message?.type === 'memory') process.send({ type: 'memory', ...memory() });
  // Microseconds of CPU (user + system) this process has used: work per request, whatever the machine's noise.
  if (message?.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ type: 'cpu', micros: user + system });
  }
});
process.on('disconnect', () => process.exit(0));

const start = servers[kind];
if (start === undefined) {
  process.stderr.write(`unknown server kind ${kind}; one of ${Object.keys(servers).join(', ')}\n`);
  process.exit(2);
}
start().then(
  (ready) => process.send({ type: 'ready', ...ready }),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
