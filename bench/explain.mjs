// Which queries of the MongoDB store an index serves. Runs the application's hot paths (bench/explain-scenario.mjs)
// on a MongoDB-wire server with the driver's command monitoring on, takes every command the adapter sent that
// reads or changes documents by a filter, and asks the server to `explain` that filter (as a find with the same
// sort and limit), so the list follows the code. For each query shape it prints:
//   - MongoDB by the indexes: which of the adapter's declared indexes (CollectionSpec, plus _id) a MongoDB
//     server's planner can use for its equality fields, range field and sort (worked out here from the index
//     keys; no MongoDB server runs on the test machine), or COLLSCAN when none can;
//   - what each server's own explain says: on FerretDB v1 its pushdown flags and the PostgreSQL or SQLite
//     plan; on a MongoDB server, its winning plan.
// Figures only; no test depends on the output.
//
//   node bench/explain.mjs [--backends=postgresql,sqlite] [--json] [[label=]uri ...]      (after a build)
// Without a uri (or BENCH_MONGODB_URI / MONGODB_URI): a FerretDB of its own per backend (bench/ferretdb.mjs).
// Each FerretDB on PostgreSQL holds about 50 connections: with PostgreSQL's default max_connections (100) and
// another one running, give the running servers' URIs instead.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';
import { scenario } from './explain-scenario.mjs';
import { benchMongoServer } from './ferretdb.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const fromAdapter = createRequire(join(root, 'packages/adapter-mongo/package.json'));
await import(pathToFileURL(fromAdapter.resolve('reflect-metadata')).href);
const hortus = (pkg) => import(pathToFileURL(join(root, `packages/${pkg}/dist/src/index.js`)).href);
const core = await hortus('core');
const { collections } = await hortus('adapter-mongo');
const { createContainer, loadConfig, startServer } = await hortus('cli');

const argument = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
/** Servers given as `uri` or `label=uri` (e.g. `PostgreSQL=mongodb://127.0.0.1:27018/`), else from the environment. */
const givenArguments = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const fromEnvironment = process.env.BENCH_MONGODB_URI ?? process.env.MONGODB_URI;
const given = (
  givenArguments.length > 0 ? givenArguments : fromEnvironment === undefined ? [] : [fromEnvironment]
).map((text) => {
  const labelled = /^([^=:/]+)=(mongodb.*)$/u.exec(text);
  return labelled === null ? { label: 'given server', uri: text } : { label: labelled[1], uri: labelled[2] };
});
const backends = (argument('backends') ?? 'postgresql,sqlite').split(',').filter(Boolean);
const log = (message) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);

/** Commands that carry no document filter (handshakes, cursors, indexes, sessions). */
const IGNORED = new Set([
  'hello',
  'ismaster',
  'isMaster',
  'ping',
  'buildInfo',
  'getMore',
  'killCursors',
  'endSessions',
  'createIndexes',
  'listIndexes',
  'listCollections',
  'drop',
  'dropDatabase',
  'saslStart',
  'saslContinue',
]);

/** A value's shape: field names and operators kept, values replaced by their type. */
function shapeOf(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (value instanceof Date) return 'date';
  if (value._bsontype === 'ObjectId') return 'id';
  if (typeof value === 'object') {
    // Field order does not change what a filter asks (nor which index serves it): one shape for either order.
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, shapeOf(v)]));
  }
  return typeof value;
}

/** `group = · time ≥ <` : each field with what the filter asks of it. */
function describeFilter(filter) {
  const signs = {
    $eq: '=',
    $gt: '>',
    $gte: '≥',
    $lt: '<',
    $lte: '≤',
    $in: 'in',
    $ne: '≠',
    $nin: 'not in',
    $exists: 'exists',
  };
  const parts = Object.entries(filter ?? {}).map(([field, condition]) => {
    if (field.startsWith('$'))
      return `${field}(${(Array.isArray(condition) ? condition : [condition]).map(describeFilter).join('; ')})`;
    const operators =
      condition !== null &&
      typeof condition === 'object' &&
      !(condition instanceof Date) &&
      condition._bsontype === undefined
        ? Object.keys(condition).filter((k) => k.startsWith('$'))
        : [];
    return operators.length === 0
      ? `${field} =`
      : `${field} ${operators.map((o) => signs[o] ?? o).join(' ')}`;
  });
  return parts.length === 0 ? '(all)' : parts.join(' · ');
}

/** The driver sends a find's sort as a Map. */
const plainSort = (sort) => (sort instanceof Map ? Object.fromEntries(sort) : sort);

/** The filter, sort and limit of one captured command (per statement for update and delete). */
function queriesOf(name, command) {
  const collection = command[name];
  switch (name) {
    case 'find':
      return [
        {
          collection,
          op: 'find',
          filter: command.filter ?? {},
          sort: plainSort(command.sort),
          limit: command.limit,
        },
      ];
    case 'aggregate': {
      const [first, second] = command.pipeline ?? [];
      const filter = first?.$match ?? {};
      const sort = plainSort(first?.$match === undefined ? first?.$sort : second?.$sort);
      const stages = command.pipeline.map((stage) => Object.keys(stage)[0]).join(' ');
      return [{ collection, op: `aggregate (${stages})`, filter, sort }];
    }
    case 'count':
      return [{ collection, op: 'count', filter: command.query ?? {} }];
    case 'distinct':
      return [
        { collection, op: `distinct ${command.key}`, distinctKey: command.key, filter: command.query ?? {} },
      ];
    case 'findAndModify': {
      const kind = command.remove ? 'remove' : command.upsert ? 'upsert' : 'update';
      return [
        {
          collection,
          op: `findAndModify (${kind})`,
          filter: command.query ?? {},
          sort: plainSort(command.sort),
        },
      ];
    }
    case 'update':
      return command.updates.map((u) => ({
        collection,
        op: `update${u.upsert ? ' (upsert)' : ''}${u.multi ? ' (many)' : ''}`,
        filter: u.q,
      }));
    case 'delete':
      return command.deletes.map((d) => ({
        collection,
        op: `delete${d.limit === 0 ? ' (many)' : ''}`,
        filter: d.q,
      }));
    case 'insert':
      return [{ collection, op: 'insert' }];
    default:
      return [{ collection, op: name, filter: {} }];
  }
}

/** What each field of a filter asks: equality (`eq`, also `$in`), a range, or something no index prefix serves. */
function predicates(filter) {
  const kinds = new Map();
  for (const [field, condition] of Object.entries(filter ?? {})) {
    if (field.startsWith('$')) continue;
    const operators =
      condition !== null &&
      typeof condition === 'object' &&
      !(condition instanceof Date) &&
      condition._bsontype === undefined
        ? Object.keys(condition)
        : [];
    if (operators.length === 0 || operators.every((o) => o === '$eq' || o === '$in')) kinds.set(field, 'eq');
    else if (operators.some((o) => ['$gt', '$gte', '$lt', '$lte'].includes(o))) kinds.set(field, 'range');
    else kinds.set(field, 'other');
  }
  return kinds;
}

/**
 * The index a MongoDB planner would use for this filter and sort, from the collection's declared indexes:
 * the longest run of equality fields from an index's first field, then one range field, and whether the
 * sort follows from the fields after the equalities. A rule of thumb of MongoDB's planner, not the planner.
 */
function mongoIndexFor(query) {
  const { collection, filter, sort } = query;
  const spec = collections.find(({ name }) => name === collection);
  if (Array.isArray(filter?.$or) && Object.keys(filter).length === 1) {
    const branches = filter.$or.map((branch) => mongoIndexFor({ collection, filter: branch }));
    if (branches.every((branch) => branch.index !== undefined))
      return { index: 'OR', text: `OR of ${branches.map((b) => b.text).join(', ')}` };
  }
  if (query.distinctKey !== undefined && Object.keys(filter ?? {}).length === 0) {
    const leading = spec?.indexes.find((index) => Object.keys(index.key)[0] === query.distinctKey);
    if (leading !== undefined) return { index: leading.name, text: `DISTINCT_SCAN ${leading.name}` };
  }
  const indexes = [{ key: { _id: 1 }, name: '_id_' }, ...(spec?.indexes ?? [])];
  const kinds = predicates(filter);
  const sortFields = Object.entries(sort ?? {});
  let best;
  for (const index of indexes) {
    const fields = Object.entries(index.key);
    let i = 0;
    while (i < fields.length && kinds.get(fields[i][0]) === 'eq') i += 1;
    const equalities = i;
    const range = i < fields.length && kinds.get(fields[i][0]) === 'range';
    const rest = fields.slice(equalities);
    // The sort follows the index after its equality fields, or from its first field on.
    const follows = (part) =>
      sortFields.length <= part.length &&
      [1, -1].some((way) =>
        sortFields.every(([f, d], k) => part[k][0] === f && Number(part[k][1]) * way === Number(d)),
      );
    const sortServed = sortFields.length > 0 && (follows(rest) || follows(fields));
    if (equalities === 0 && !range && !sortServed) continue;
    const score = equalities * 4 + (range ? 2 : 0) + (sortServed ? 1 : 0);
    if (best === undefined || score > best.score)
      best = { name: index.name, score, equalities, range, sortServed, fields: fields.length };
  }
  if (best === undefined) {
    if (Object.keys(filter ?? {}).length === 0 && query.limit === 1 && sortFields.length === 0)
      return { index: 'first', text: 'COLLSCAN, ends at the first document' };
    return { index: undefined, text: sortFields.length > 0 ? 'COLLSCAN + sort in memory' : 'COLLSCAN' };
  }
  const parts = best.equalities > 0 ? [`${best.equalities} eq`] : [];
  if (best.range) parts.push('range');
  if (sortFields.length > 0) parts.push(best.sortServed ? 'sorted by it' : 'sort in memory');
  return { index: best.name, text: `IXSCAN ${best.name} (${parts.join(', ')})` };
}

/** The nodes of a PostgreSQL JSON plan, depth first. */
function planNodes(node) {
  return node === undefined ? [] : [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** What the server's explain says, in a few words. */
function summarise(explained) {
  const planner = explained.queryPlanner ?? {};
  if ('filterPushdown' in explained) {
    const flags = `${explained.filterPushdown ? 'filter in SQL' : 'every row to FerretDB'}${explained.sortPushdown ? ', sort in SQL' : ''}${explained.limitPushdown ? ', limit in SQL' : ''}`;
    if (Array.isArray(planner.Plan)) {
      const details = planner.Plan.map((line) => /detail=(.*)$/u.exec(line)?.[1] ?? line);
      return `${details.join('; ').replace(/ [a-z0-9_]+_[0-9a-f]{8}\b/gu, '')} (${flags})`;
    }
    const nodes = planNodes(planner.Plan);
    const indexed = nodes.find((node) => node['Index Name'] !== undefined);
    const scan =
      indexed === undefined
        ? (nodes.at(-1)?.['Node Type'] ?? '?')
        : `${indexed['Node Type']} ${indexed['Index Name']}`;
    return `${scan} (${flags})`;
  }
  const stages = [];
  const walk = (stage) => {
    if (stage === undefined) return;
    stages.push(stage.indexName === undefined ? stage.stage : `${stage.stage} ${stage.indexName}`);
    walk(stage.inputStage);
    for (const input of stage.inputStages ?? []) walk(input);
  };
  walk(planner.winningPlan?.queryPlan ?? planner.winningPlan);
  return stages.join(' ← ') || JSON.stringify(planner).slice(0, 80);
}

/** Starts the application on the server, runs the scenario with command monitoring on, answers the queries. */
async function capture(uri, database) {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    STORE: 'mongodb',
    MONGODB_URI: uri,
    MONGODB_DB: database,
    MONGODB_TIMEOUT_MS: '60000',
    AUTH: 'off',
    LOG_REQUESTS: 'off',
    RATE_LIMIT_PER_MINUTE: '100000000',
    // The scenario ticks the engine and works the outbox itself, so each command belongs to one step.
    AUTOMATION_TICK_MS: '60000',
    ALERT_DELIVERY_MS: '600000',
  });
  const container = await createContainer(config, { logger: core.silentLogger });
  const store = container.get(core.STORE_LIFECYCLE);
  store.client.monitorCommands = true;
  let step = 'server start';
  const seen = new Map();
  store.client.on('commandStarted', ({ commandName, command }) => {
    if (IGNORED.has(commandName)) return;
    for (const query of queriesOf(commandName, command)) {
      const key = `${query.collection}|${query.op}|${JSON.stringify(shapeOf(query.filter))}|${JSON.stringify(query.sort ?? {})}|${query.limit === undefined ? '' : 'limit'}`;
      const known = seen.get(key);
      if (known === undefined) seen.set(key, { ...query, key, steps: [step], count: 1 });
      else {
        known.count += 1;
        if (!known.steps.includes(step)) known.steps.push(step);
      }
    }
  });
  const running = await startServer(config, { container, logger: core.silentLogger });
  try {
    const use = (useCase) => container.get(useCase);
    for (const [name, run] of scenario({ use, core, url: running.url, now: Date.now() })) {
      step = name;
      log(`  ${name}`);
      await run();
    }
    step = 'after the scenario';
  } finally {
    await running.close();
  }
  return [...seen.values()];
}

/** Each query's explain on the server (as a find of its filter, sort and limit). */
async function explainAll(uri, database, queries) {
  const { MongoClient } = await import(pathToFileURL(fromAdapter.resolve('mongodb')).href);
  const client = new MongoClient(uri);
  try {
    const db = client.db(database);
    const ferret = 'ferretdbVersion' in (await db.admin().command({ buildInfo: 1 }));
    for (const query of queries) {
      if (query.filter === undefined) continue;
      const find = { find: query.collection, filter: query.filter };
      if (query.sort !== undefined) find.sort = query.sort;
      if (query.limit !== undefined) find.limit = query.limit;
      try {
        query.explained = summarise(await db.command({ explain: find, verbosity: 'queryPlanner' }));
      } catch (error) {
        query.explained = `explain failed: ${error.message}`;
      }
    }
    return ferret;
  } finally {
    await client.close();
  }
}

async function runOn(server, label) {
  const database = `hortus_explain_${Date.now().toString(36)}`;
  log(`${label}: running the scenario`);
  const queries = await capture(server.uri, database);
  log(`${label}: ${queries.length} query shapes; explaining them`);
  await explainAll(server.uri, database, queries);
  const { MongoClient } = await import(pathToFileURL(fromAdapter.resolve('mongodb')).href);
  const client = new MongoClient(server.uri);
  await client
    .db(database)
    .dropDatabase()
    .catch(() => undefined);
  await client.close();
  return queries;
}

const runs = [];
if (given.length > 0) {
  for (const { label, uri } of given) runs.push({ label, queries: await runOn({ uri }, label) });
} else {
  for (const backend of backends) {
    const server = await benchMongoServer(root, backend);
    if (server === undefined)
      throw new Error('no MongoDB: give a uri, or build FerretDB (bash scripts/ferretdb.sh build)');
    try {
      const label = `FerretDB ${backend === 'postgresql' ? 'PostgreSQL' : 'SQLite'}`;
      runs.push({ label, queries: await runOn(server, label) });
    } finally {
      await server.stop();
    }
  }
}

// One row per query shape, in the order the scenario first sent it; one column per server.
const rows = new Map();
for (const { label, queries } of runs) {
  for (const query of queries) {
    const row = rows.get(query.key) ?? { ...query, mongo: mongoIndexFor(query), on: {} };
    row.on[label] = query.explained ?? '-';
    rows.set(query.key, row);
  }
}
const labels = runs.map(({ label }) => label);
if (process.argv.includes('--json')) {
  process.stdout.write(
    `${JSON.stringify(
      [...rows.values()].map(({ filter, ...row }) => ({ ...row, filter: shapeOf(filter) })),
      null,
      2,
    )}\n`,
  );
} else {
  const cell = (text) => String(text).replaceAll('|', '\\|');
  const lines = [
    `| Step (first seen) | Collection | Operation | Filter · sort · limit | MongoDB by the indexes | ${labels.join(' | ')} |`,
    `| --- | --- | --- | --- | --- | ${labels.map(() => '---').join(' | ')} |`,
  ];
  for (const row of rows.values()) {
    if (row.op === 'insert') continue;
    const sort =
      row.sort === undefined
        ? ''
        : ` · sort ${Object.entries(row.sort)
            .map(([f, d]) => `${f}:${d}`)
            .join(',')}`;
    const limit = row.limit === undefined ? '' : ` · limit ${row.limit}`;
    lines.push(
      `| ${cell(row.steps[0])} | ${row.collection} | ${cell(row.op)} | ${cell(describeFilter(row.filter) + sort + limit)} | ${cell(row.mongo.text)} | ${labels.map((l) => cell(row.on[l] ?? 'not sent')).join(' | ')} |`,
    );
  }
  const inserts = [...rows.values()].filter((row) => row.op === 'insert').map((row) => row.collection);
  lines.push('', `Inserts (no filter): ${[...new Set(inserts)].join(', ')}.`);
  const scans = [...rows.values()].filter((row) => row.op !== 'insert' && row.mongo.index === undefined);
  lines.push(
    `Shapes no declared index serves on MongoDB: ${scans.length === 0 ? 'none' : scans.map((r) => `${r.collection} ${r.op} {${describeFilter(r.filter)}}`).join('; ')}.`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
process.exit(0);
