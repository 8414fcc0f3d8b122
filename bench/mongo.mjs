// The `mongo` part of `pnpm bench`, on the test MongoDB (see bench/ferretdb.mjs): ingest over HTTP, history
// into buckets, and polling against the memory store in the same run.
import { randomBytes } from 'node:crypto';
import { log, median, round } from './harness.mjs';
import { BATCH, historyLatency, historyTargets, ingest, ingestMarkdown, readingBatches } from './history.mjs';
import { pollingRoutes } from './polling.mjs';

/**
 * Polling on the test MongoDB against the memory store, in the same run and on the same demo data: full
 * answers and 304s of each polled route, alternating between the two servers round by round.
 */
async function mongoPolling(bench, uri, database) {
  const { startServer, get, answered304, load, plan } = bench;
  const mongo = await startServer('hortus', {
    BENCH_MONGODB_URI: uri,
    BENCH_MONGODB_DB: database,
    BENCH_DEMO: 'on',
  });
  const memory = await startServer('hortus', { BENCH_DEMO: 'on' });
  try {
    const figures = {};
    for (const { route, path } of pollingRoutes) {
      for (const conditional of [false, true]) {
        const rates = { mongo: [], memory: [] };
        const run = async (server, seconds) => {
          const reply = conditional ? await get(server.url, path) : undefined;
          const headers = reply === undefined ? {} : { 'if-none-match': reply.headers.etag };
          const before = conditional ? await answered304(server) : 0;
          const result = await load(server.url, path, seconds, headers);
          const notModified = conditional ? (await answered304(server)) - before : 0;
          if (
            result.errors > 0 ||
            (result.statuses.failed ?? 0) > 0 ||
            notModified < (conditional ? 0.95 : 0) * result.total
          ) {
            throw new Error(
              `MongoDB polling ${route}: ${JSON.stringify(result.statuses)}, ${notModified} answered 304, ${result.errors} errors`,
            );
          }
          return result.rps;
        };
        if (plan.warmupSeconds !== undefined) {
          await run(mongo, plan.warmupSeconds);
          await run(memory, plan.warmupSeconds);
        }
        for (let r = 0; r < plan.mongoPollingRounds; r += 1) {
          rates.mongo.push(await run(mongo, plan.seconds ?? 1));
          rates.memory.push(await run(memory, plan.seconds ?? 1));
        }
        figures[`${route}${conditional ? ' 304' : ''}`] = {
          mongoRps: Math.round(median(rates.mongo)),
          memoryRps: Math.round(median(rates.memory)),
          ratio: round(median(rates.mongo.map((value, i) => value / rates.memory[i]))),
        };
      }
    }
    return figures;
  } finally {
    await Promise.all([mongo.stop(), memory.stop()]);
  }
}

export async function mongoPart(bench) {
  const { startServer, latency, mongoServer, dropDatabase, plan } = bench;
  const mongo = await mongoServer();
  if (mongo === undefined) {
    log(
      'MongoDB part skipped: no MONGODB_URI and no tools/ferretdb/bin/ferretdb-test (bash scripts/ferretdb.sh build)',
    );
    return { skipped: 'no MONGODB_URI and no FerretDB test server binary' };
  }
  const database = `hortus_bench_${randomBytes(4).toString('hex')}`;
  try {
    const server = await startServer('hortus', {
      BENCH_MONGODB_URI: mongo.uri,
      BENCH_MONGODB_DB: database,
      // A batch of 5000 takes FerretDB seconds once the rollups grow: the bench measures throughput, not
      // the production deadline (MONGODB_TIMEOUT_MS, 2 s), which would answer those batches 503.
      BENCH_MONGODB_TIMEOUT_MS: '120000',
    });
    try {
      const { total, bodies } = readingBatches('bench-history', plan.mongoDays, Date.now());
      log(`ingest into MongoDB (${mongo.kind}): ${total} readings in batches of ${BATCH}, one at a time`);
      // One batch at a time: FerretDB applies updates as unisolated read-modify-writes (see the README).
      const ingested = await ingest(server.url, bodies, 1);
      const history = await historyLatency(server.url, total, (path) =>
        latency(server.url, path, { count: plan.mongoQueries }),
      );
      await server.stop();
      log(`polling on MongoDB (${mongo.kind}) against the memory store`);
      const polling = await mongoPolling(bench, mongo.uri, `${database}_polling`);
      return { server: mongo.kind, ingest: ingested, history: { readings: total, ...history }, polling };
    } finally {
      await server.stop();
    }
  } finally {
    if (mongo.kind === 'given') {
      await dropDatabase(mongo.uri, database);
      await dropDatabase(mongo.uri, `${database}_polling`);
    }
    await mongo.stop();
  }
}

export function mongoTargets(mongo) {
  const list = [...historyTargets('test MongoDB', mongo?.history, 300)];
  const add = (name, goal, measured, met) => list.push({ name, goal, measured, met });
  if (mongo?.ingest !== undefined) {
    const { perSecond } = mongo.ingest;
    add(
      'Ingest over HTTP, test MongoDB',
      '>= 5,000 readings/s',
      `${perSecond.toLocaleString('en')}/s`,
      perSecond >= 5000,
    );
  }
  for (const [route, figure] of Object.entries(mongo?.polling ?? {})) {
    add(
      `Polling ${route.endsWith(' 304') ? `${route.slice(0, -4)}, 304` : `${route}, full answer`}, test MongoDB vs memory store`,
      '>= 0.7 x',
      `${figure.ratio} x (${figure.mongoRps.toLocaleString('en')} vs ${figure.memoryRps.toLocaleString('en')} req/s)`,
      figure.ratio >= 0.7,
    );
  }
  return list;
}

export function mongoMarkdown(mongo) {
  if (mongo === undefined) return [];
  if (mongo.skipped !== undefined) return ['', `MongoDB part skipped: ${mongo.skipped}.`];
  return ingestMarkdown([
    `test MongoDB (${mongo.server}), one at a time: ${mongo.ingest.perSecond.toLocaleString('en')}/s`,
  ]);
}
