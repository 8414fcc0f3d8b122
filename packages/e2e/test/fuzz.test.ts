import { Agent, request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import {
  ACTION_REPOSITORY,
  type ActionRepository,
  AUTOMATION_LOG_REPOSITORY,
  type AutomationLogRepository,
  DEVICE_REPOSITORY,
  type DeviceRepository,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  type HistoryChartRepository,
  MAX_READINGS_LIMIT,
  NOTIFICATION_REPOSITORY,
  type NotificationRepository,
  READING_REPOSITORY,
  type ReadingRepository,
  USER_REPOSITORY,
  type UserRepository,
  CreateUser,
  PASSWORD_HASHER,
  type PasswordHasher,
} from '@hortus/core';
import { apiRouters, type RouteSpec } from '@hortus/http-koa';
import { BcryptPasswordHasher } from '@hortus/identity';
import fc from 'fast-check';
import { expect, FakeCodeHost, startTestServer, type TestServer, testStore } from './harness.js';

/*
 * Property-based robustness: every route gets generated bad requests (wrong types, missing fields,
 * operator objects, huge and odd-unicode strings, invalid dates and numbers, repeated parameters,
 * malformed JSON, wrong content types, path tricks). Each one must be answered below 500, within a bound,
 * without a stack trace, and when it is refused (4xx) the stored data it names must be unchanged.
 */

/**
 * Requests per route. The Mongo pass runs few: there every request costs two snapshots of tens of queries.
 * HORTUS_FUZZ_RUNS runs more, HORTUS_FUZZ_SEED replays the seed a failure printed.
 */
const RUNS_PER_ROUTE = Number(
  process.env['HORTUS_FUZZ_RUNS'] ?? { memory: 150, sqlite: 20, mongodb: 3 }[testStore],
);
const seedText = process.env['HORTUS_FUZZ_SEED']?.trim();
const SEED = seedText === undefined || seedText === '' ? undefined : Number(seedText);
// A hang or a pathological path takes far longer; a loaded machine adds hundreds of milliseconds, not seconds.
const ANSWER_BOUND_MS = testStore === 'mongodb' ? 8000 : 5000;

// ---- the request model ---------------------------------------------------------------------------------

type QueryValue = string | readonly string[];

interface Example {
  readonly method: string;
  /** Route path under its prefix in @koa/router syntax. */
  readonly template: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, QueryValue>>;
  /** undefined: no body is sent. */
  readonly body: unknown;
}

interface WireRequest {
  readonly method: string;
  /** Already percent-encoded path and query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Strings the request names: the snapshot looks them up before and after. */
  readonly names: readonly string[];
}

interface Pool {
  readonly group: string;
  readonly userId: string;
  readonly chartName: string;
  readonly deviceId: string;
  readonly time: string;
}

const temperature = 'esp/air/temperature';
const PASSWORD = 'Tomato#Bed42';
const seededTime = '2025-06-15T10:00:00.000Z';

/** A valid value for each query or path parameter name the routes use. */
function validParameter(name: string, pool: Pool): string {
  const values: Record<string, string> = {
    group: pool.group,
    groupId: pool.group,
    object: 'pump_1',
    deviceName: 'pump_1',
    value: 'on',
    deviceId: pool.deviceId,
    type: 'sensor-box',
    startDate: '2025-06-14',
    endDate: '2025-06-15T23:00:00Z',
    minValue: '10',
    maxValue: '30.5',
    count: '5',
    userId: pool.userId,
    id: pool.userId,
    chartName: pool.chartName,
    dataTyp: 'lux',
  };
  return values[name] ?? 'x';
}

/** A valid body per route (keyed by method and full path); routes without an entry send `{}`. */
function validBody(key: string, pool: Pool): unknown {
  const bodies: Record<string, unknown> = {
    'POST /api/data/readings': [
      { group: pool.group, topic: temperature, value: 21.5, time: '2025-06-15T11:00:00Z' },
      { group: pool.group, time: '2025-06-15T11:05:00Z', values: { 'esp/air/humidity': 55 } },
    ],
    'POST /api/actions/update': {
      object: 'pump_1',
      group: pool.group,
      automations: [
        {
          timeAutomations: [{ action: 'on', time: '08:00', frequency: 'every day' }],
          sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '30' }],
        },
      ],
    },
    'POST /api/notification/notifications/ignore': { time: pool.time, times: [pool.time] },
    'POST /api/historyChart/update/:userId': {
      chartId: 'c2',
      chartName: 'Beds',
      chartData: { type: 'line', max_count: 100, datasets: [{ checked_lux: true }] },
    },
    'PUT /api/historyChart/change_datasets/:userId/:chartName/:dataTyp': { checked: true },
    'PUT /api/historyChart/change_type/:userId/:chartName': { type: 'scatter' },
    'PUT /api/historyChart/change_data_interval/:userId/:chartName': { data_interval: 60_000 },
    'PUT /api/historyChart/change_update_interval/:userId/:chartName': { update_interval: 5000 },
    'PUT /api/historyChart/change_max_count/:userId/:chartName': { max_count: 200 },
    'PUT /api/group/update': { settings: [{ tempMin: 15 }, { tempMax: 30 }] },
    'POST /api/changeEmail/:userId': { newEmail: 'ada@example.org' },
    'POST /api/users/': {
      firstName: 'Fuzz',
      lastName: 'Er',
      email: `${pool.group}-new@example.org`,
      password: PASSWORD,
      group: pool.group,
    },
    'POST /api/auth/': { email: `${pool.group}@example.org`, password: PASSWORD },
    'POST /api/password-reset/': { email: `${pool.group}@example.org` },
    'POST /api/password-reset/resetvalidate': {
      _id: pool.userId,
      token: 'ab'.repeat(32),
      password: PASSWORD,
    },
  };
  return bodies[key] ?? {};
}

function propertyNames(schema: RouteSpec['query']): string[] {
  const properties = schema?.['properties'] as Record<string, unknown> | undefined;
  return properties === undefined ? [] : Object.keys(properties);
}

interface FuzzRoute {
  readonly key: string;
  readonly prefix: string;
  readonly spec: RouteSpec;
}

const routes: FuzzRoute[] = apiRouters.flatMap((router) =>
  router.routes.map((spec) => ({
    key: `${spec.method.toUpperCase()} ${router.prefix}${spec.path}`,
    prefix: router.prefix,
    spec,
  })),
);

function exampleOf({ key, prefix, spec }: FuzzRoute, pool: Pool): Example {
  const params = Object.fromEntries(
    [...spec.path.matchAll(/:(\w+)/gu)].map(([, name = '']) => [name, validParameter(name, pool)]),
  );
  const query = Object.fromEntries(
    propertyNames(spec.query ?? spec.unvalidatedQuery).map((name) => [name, validParameter(name, pool)]),
  );
  return {
    method: spec.method.toUpperCase(),
    template: `${prefix}${spec.path}`,
    params,
    query,
    body: spec.body === undefined ? undefined : validBody(key, pool),
  };
}

// ---- bad values ----------------------------------------------------------------------------------------

const oddPieces = [
  '\u0000',
  '\uD800', // a lone surrogate: not valid UTF-16
  '\uDFFF',
  '\u202E', // right-to-left override
  '\u200B',
  '\uFEFF',
  '\u2028',
  '🌱',
  'e\u0301',
  'İ',
  'ß',
  '\uFFFF',
  '%',
  '%00',
  '../',
  '..\\',
  '$',
  '.',
  '$where',
  '{"$gt":""}',
  "'; DROP TABLE readings; --",
  '<script>alert(1)</script>',
  ' ',
  '\t\n',
];

const oddString = fc
  .array(fc.constantFrom(...oddPieces), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));

/** Long enough to break every length limit; the URL forms stay under Node's 16 KiB header limit. */
const hugeString = fc
  .tuple(fc.constantFrom(101, 201, 257, 2001, 3000), fc.constantFrom('a', 'é', '🌱', '\u0000', '%', '9'))
  .map(([length, character]) => character.repeat(length));

const badDate = fc.constantFrom(
  '2025-13-45',
  '2025-02-30T25:61:61Z',
  '2025-06-15T12:00:00+99:99',
  'yesterday',
  '0000-00-00',
  '+275760-09-13T00:00:00.001Z',
  '-271821-04-20T00:00:00Z',
  '9999-12-31T23:59:59.999999999Z',
  '２０２５-06-15',
  '2025-06-15T12:00:00.1234567890Z',
  '1718000000000',
  '2025-06-15 12:00',
  'Sun, 15 Jun 2025 12:00:00 GMT',
  '',
  // What a lenient parser used to take: a day rolled into March, a bare number, the server's own zone.
  '2025-02-30',
  '1',
  'March 7 2025',
  '2025-06-15T12:00:00',
);

const badNumberText = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '1e-400',
  '-0',
  '0x10',
  '1_000',
  '٣',
  '１',
  '9'.repeat(400),
  '+-1',
  '.',
  '-',
  ' 1 ',
  '1,5',
  '-5',
  '99999999',
  '0',
);

const badText = fc.oneof(oddString, hugeString, badDate, badNumberText, fc.string({ maxLength: 40 }));

/** Values only JSON can carry: wrong types, operator objects, prototype keys, deep nesting. */
const operatorObject = fc.constantFrom<unknown>(
  { $gt: '' },
  { $ne: null },
  { $where: 'sleep(1000)' },
  { $regex: '.*', $options: 'i' },
  { $in: ['on', 'off'] },
  { $expr: { $eq: [1, 1] } },
  { 'a.b': 1, $set: { value: 'on' } },
  { constructor: { prototype: { polluted: true } } },
  { toString: 'x', valueOf: 1 },
);

const deepValue = fc.constantFrom(30, 33, 150, 1000, 2000).map((depth) => {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { nested: value };
  return value;
});

const badJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: badText },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      1e308,
      -1e308,
      2 ** 53 + 1,
      [],
      {},
      [null],
      [[]],
      '',
    ),
  },
  { weight: 2, arbitrary: operatorObject },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.array(badText, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const junkQueryKeys = fc.constantFrom(
  '__proto__',
  'constructor',
  'group[$ne]',
  '$where',
  'a.b',
  '',
  '🌱',
  '_',
);

const malformedBodies = fc.constantFrom(
  '{"group": "a",',
  '{',
  '[',
  'nul',
  '{"a":1}}',
  '\uFEFF{}',
  '{"a":1,"a":2}',
  '{"__proto__": {"polluted": true}}',
  'group=a&object=b',
  '<xml/>',
  '',
  '   ',
  '"just a string"',
  '1',
  'true',
  'null',
  '[]',
  '{"value": NaN}',
  "{'single': 'quotes'}",
  '{"a": "\\ud800"}',
  '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
);

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  '*/*',
  'json',
);

// ---- mutations of a valid example ---------------------------------------------------------------------

type Mutation =
  | { readonly kind: 'query-set'; readonly key: string | number; readonly value: string }
  | { readonly kind: 'query-repeat'; readonly key: number; readonly values: readonly string[] }
  | { readonly kind: 'query-drop'; readonly key: number }
  | { readonly kind: 'param-set'; readonly key: number; readonly value: string }
  | { readonly kind: 'body-set'; readonly at: number; readonly value: unknown }
  | { readonly kind: 'body-drop'; readonly at: number }
  | { readonly kind: 'body-replace'; readonly value: unknown }
  | { readonly kind: 'body-raw'; readonly text: string }
  | { readonly kind: 'content-type'; readonly value: string | undefined }
  | { readonly kind: 'encoding'; readonly value: BodyEncoding }
  | { readonly kind: 'method'; readonly value: string }
  | { readonly kind: 'path'; readonly trick: number };

/** How the body is sent: compressed right, compressed wrong, or under a coding the server does not know. */
const bodyEncodings = [
  'gzip',
  'deflate',
  'br',
  'gzip-garbage',
  'gzip-truncated',
  'deflate-garbage',
  'br-garbage',
  'zstd',
  'gzip, br',
] as const;
type BodyEncoding = (typeof bodyEncodings)[number];

function encodeBody(text: string, encoding: BodyEncoding): { coding: string; bytes: Buffer } {
  const garbage = Buffer.from('\x1f\x8b\x08 this is not what it claims to be');
  switch (encoding) {
    case 'gzip':
      return { coding: 'gzip', bytes: gzipSync(text) };
    case 'deflate':
      return { coding: 'deflate', bytes: deflateSync(text) };
    case 'br':
      return { coding: 'br', bytes: brotliCompressSync(text) };
    case 'gzip-garbage':
      return { coding: 'gzip', bytes: garbage };
    case 'gzip-truncated': {
      const whole = gzipSync(text);
      return { coding: 'gzip', bytes: whole.subarray(0, Math.max(1, whole.length - 9)) };
    }
    case 'deflate-garbage':
      return { coding: 'deflate', bytes: garbage };
    case 'br-garbage':
      return { coding: 'br', bytes: garbage };
    case 'zstd':
    case 'gzip, br':
      return { coding: encoding, bytes: Buffer.from(text) };
  }
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('query-set' as const),
    key: fc.oneof(fc.nat(), junkQueryKeys),
    value: badText,
  }),
  fc.record({
    kind: fc.constant('query-repeat' as const),
    key: fc.nat(),
    values: fc.array(fc.oneof(badText, fc.constant('fz')), { minLength: 2, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('query-drop' as const), key: fc.nat() }),
  fc.record({ kind: fc.constant('param-set' as const), key: fc.nat(), value: badText }),
  fc.record({ kind: fc.constant('body-set' as const), at: fc.nat(), value: badJson }),
  fc.record({ kind: fc.constant('body-drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('body-replace' as const), value: badJson }),
  fc.record({ kind: fc.constant('body-raw' as const), text: malformedBodies }),
  fc.record({
    kind: fc.constant('content-type' as const),
    value: fc.option(contentTypes, { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('method' as const),
    value: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  }),
  fc.record({ kind: fc.constant('path' as const), trick: fc.nat() }),
  fc.record({ kind: fc.constant('encoding' as const), value: fc.constantFrom(...bodyEncodings) }),
);

/** Every place inside a JSON value, as key paths; the root is the empty path. */
function jsonPaths(value: unknown, prefix: readonly (string | number)[] = []): (string | number)[][] {
  const paths: (string | number)[][] = [[...prefix]];
  if (Array.isArray(value))
    value.forEach((item, index) => paths.push(...jsonPaths(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) paths.push(...jsonPaths(item, [...prefix, key]));
  return paths;
}

/** A copy of `value` with the place at `path` replaced by `replacement`, or removed when `drop`. */
function withAt(
  value: unknown,
  path: readonly (string | number)[],
  replacement: unknown,
  drop: boolean,
): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return drop ? undefined : replacement;
  if (Array.isArray(value)) {
    const copy = [...(value as unknown[])];
    if (rest.length === 0 && drop) copy.splice(Number(head), 1);
    else copy[Number(head)] = withAt(copy[Number(head)], rest, replacement, drop);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && drop) delete copy[String(head)];
  else copy[String(head)] = withAt(copy[String(head)], rest, replacement, drop);
  return copy;
}

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become U+FFFD, as a browser sends them). */
function encode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/u.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

const pathTricks: ((path: string) => string)[] = [
  (path) => path.toUpperCase(),
  (path) => `${path}/`,
  (path) => `/${path}`,
  (path) => path.replace(/^\/api\//u, '/api/./'),
  (path) => path.replace(/^\/api\//u, '/api/../api/'),
  (path) => path.replace(/^\/api\//u, '/api/%2e%2e/api/'),
  (path) => path.replace(/\/([^/]*)$/u, '%2F$1'),
  (path) => `${path};jsessionid=1`,
  (path) => `${path}%00`,
  (path) => `${path}/..%2F..%2Fetc%2Fpasswd`,
  (path) => `${path}%E0%A4%A`,
  (path) => `${path}%`,
  (path) => `${path}%zz`,
  (path) => `${path}%C3%28`,
  (path) => `${path}%ED%A0%80`,
  (path) => `${path}\\..\\`,
  (path) => path.replace(/\//gu, '//'),
  (path) => `${path}/${'a'.repeat(8000)}`,
  (path) => `${path}/%F0%9F%8C%B1`,
];

function toWire(example: Example, mutations: readonly Mutation[]): WireRequest {
  let method = example.method;
  const params = { ...example.params };
  const query: Record<string, QueryValue> = { ...example.query };
  let body: unknown = example.body;
  let raw: string | undefined;
  let contentType: string | undefined = 'application/json';
  let trick: ((path: string) => string) | undefined;
  let encoding: BodyEncoding | undefined;
  const queryKeys = Object.keys(query);
  const paramKeys = Object.keys(params);
  const pick = <T>(list: readonly T[], index: number): T | undefined =>
    list[index % Math.max(1, list.length)];

  for (const change of mutations) {
    switch (change.kind) {
      case 'query-set': {
        const key = typeof change.key === 'number' ? (pick(queryKeys, change.key) ?? 'q') : change.key;
        query[key] = change.value;
        break;
      }
      case 'query-repeat':
        query[pick(queryKeys, change.key) ?? 'q'] = change.values;
        break;
      case 'query-drop':
        delete query[pick(queryKeys, change.key) ?? ''];
        break;
      case 'param-set': {
        const key = pick(paramKeys, change.key);
        if (key !== undefined) params[key] = change.value;
        break;
      }
      case 'body-set':
      case 'body-drop': {
        const paths = jsonPaths(body);
        const path = pick(paths, change.at) ?? [];
        body = withAt(
          body,
          path,
          change.kind === 'body-set' ? change.value : undefined,
          change.kind === 'body-drop',
        );
        raw = undefined;
        break;
      }
      case 'body-replace':
        body = change.value;
        raw = undefined;
        break;
      case 'body-raw':
        raw = change.text;
        break;
      case 'content-type':
        contentType = change.value;
        break;
      case 'method':
        method = change.value;
        break;
      case 'path':
        trick = pick(pathTricks, change.trick);
        break;
      case 'encoding':
        encoding = change.value;
        break;
    }
  }

  let path = example.template.replace(/:(\w+)/gu, (_, name: string) => encode(params[name] ?? ''));
  if (trick !== undefined) path = trick(path);
  const search = Object.entries(query)
    .flatMap(([key, value]) =>
      (typeof value === 'string' ? [value] : value).map((item) => `${encode(key)}=${encode(item)}`),
    )
    .join('&');
  const text = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const names = [
    ...Object.values(params),
    ...Object.values(query).flatMap((value) => (typeof value === 'string' ? [value] : [...value])),
    ...stringsIn(body),
  ];
  const encoded = text === undefined || encoding === undefined ? undefined : encodeBody(text, encoding);
  const headers: Record<string, string> =
    text === undefined || contentType === undefined ? {} : { 'content-type': contentType };
  if (encoded !== undefined) headers['content-encoding'] = encoded.coding;
  const wireBody = encoded?.bytes ?? text;
  return {
    method,
    path: search === '' ? path : `${path}?${search}`,
    headers,
    ...(wireBody === undefined ? {} : { body: wireBody }),
    names,
  };
}

function stringsIn(value: unknown, depth = 0): string[] {
  if (depth > 20) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap((item) => stringsIn(item, depth + 1));
  if (typeof value === 'object' && value !== null)
    return Object.values(value).flatMap((item) => stringsIn(item, depth + 1));
  return [];
}

// ---- the oracle: answers and stored state --------------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  readonly ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(url: string, wire: WireRequest): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: wire.method,
        path: wire.path,
        // Framed explicitly: Node sends a GET body unframed, which the server would read as a next request.
        headers:
          wire.body === undefined
            ? wire.headers
            : { ...wire.headers, 'content-length': String(Buffer.byteLength(wire.body)) },
        agent,
        timeout: ANSWER_BOUND_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${ANSWER_BOUND_MS} ms`)));
    outgoing.on('error', reject);
    outgoing.end(wire.body);
  });
}

interface Store {
  readonly readings: ReadingRepository;
  readonly actions: ActionRepository;
  readonly devices: DeviceRepository;
  readonly notifications: NotificationRepository;
  readonly charts: HistoryChartRepository;
  readonly groups: GroupRepository;
  readonly users: UserRepository;
  readonly log: AutomationLogRepository;
}

/** Everything stored under the given names (as group, user id), plus the list of groups, as JSON. */
async function snapshot(store: Store, names: ReadonlySet<string>): Promise<string> {
  // All lookups at once: on MongoDB this is one round of queries instead of one per lookup.
  const perName = await Promise.all(
    [...names].map(async (name) => {
      const [group, actions, devices, notifications, readings, log, user, charts, account, credentials] =
        await Promise.all([
          store.groups.findByName(name),
          store.actions.listByGroup(name),
          store.devices.listByGroup(name),
          store.notifications.listOpen(name),
          store.readings.latestOfEveryTopic(name).then((latest) =>
            Promise.all(
              latest.map(async ({ topic }) => ({
                topic,
                count: (await store.readings.newestFirst({ group: name, topic }, MAX_READINGS_LIMIT)).length,
              })),
            ),
          ),
          store.log.listByGroup(name, 100),
          store.users.findById(name),
          store.charts.findByUser(name),
          store.users.findByEmail(name),
          store.users.findCredentials(name),
        ]);
      return {
        name,
        group,
        actions,
        devices,
        notifications,
        readings,
        log,
        user,
        charts,
        account,
        credentials,
      };
    }),
  );
  return JSON.stringify({ groups: await store.groups.list(), perName });
}

const stackTrace = /\n\s+at .+:\d+:\d+/u;

interface Tally {
  requests: number;
  byStatus: Map<number, number>;
  slowestMs: number;
}

// ---- the suite -----------------------------------------------------------------------------------------

describe(`HTTP fuzzing: generated bad requests on every route (${testStore} store)`, function () {
  this.timeout(120_000);
  let api: TestServer;
  let host: FakeCodeHost;
  let store: Store;
  const tally: Tally = { requests: 0, byStatus: new Map(), slowestMs: 0 };

  before(async () => {
    host = new FakeCodeHost();
    const apiUrl = await host.start();
    host.answerJson(200, [{ sha: 'abc', commit: { message: 'm', author: { date: seededTime } } }]);
    // The lowest bcrypt cost: this suite is about input handling, and generated log-ins would spend minutes hashing.
    api = await startTestServer({ CODE_HOST_API_URL: apiUrl, CODE_HOST_REPOSITORY: 'o/r' }, (container) =>
      container
        .rebind<PasswordHasher>(PASSWORD_HASHER)
        .toConstantValue(new BcryptPasswordHasher({ cost: 4 })),
    );
    const { container } = api;
    store = {
      readings: container.get(READING_REPOSITORY),
      actions: container.get(ACTION_REPOSITORY),
      devices: container.get(DEVICE_REPOSITORY),
      notifications: container.get(NOTIFICATION_REPOSITORY),
      charts: container.get(HISTORY_CHART_REPOSITORY),
      groups: container.get(GROUP_REPOSITORY),
      users: container.get(USER_REPOSITORY),
      log: container.get(AUTOMATION_LOG_REPOSITORY),
    };
  });

  after(async () => {
    agent.destroy();
    await api?.close();
    await host?.stop();
    const statuses = [...tally.byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    // The figure the robustness notes quote: how many generated requests were tried, and their answers.
    console.log(
      `      fuzz (${testStore}): ${tally.requests} requests on ${routes.length} routes; ${statuses}; slowest ${Math.round(tally.slowestMs)} ms`,
    );
  });

  /** A greenhouse of its own per route, so what one route's valid mutations changed is not the next's baseline. */
  async function seedPool(): Promise<Pool> {
    const group = api.unique('fz');
    await api.seed.group(group, [{ tempMin: 15 }]);
    await api.seed.action(group, 'pump_1');
    await api.seed.action(group, 'led_1', 'on');
    const deviceId = api.unique('AA:BB:CC:00:00');
    await api.seed.device(deviceId, group);
    await api.seed.notification(group, seededTime);
    await api.seed.readings([
      { group, topic: temperature, value: 20, time: seededTime },
      { group, topic: 'esp/air/humidity', value: 60, time: seededTime },
    ]);
    const { id: userId } = await api.container.get(CreateUser).execute({
      firstName: 'Fuzz',
      lastName: 'Er',
      email: `${group}@example.org`,
      group,
      password: PASSWORD,
    });
    const chart = await api.call('POST', `/api/historyChart/update/${userId}`, {
      json: { chartId: 'c1', chartName: 'c1', chartData: { type: 'line', datasets: [{}] } },
    });
    expect(chart.status).to.equal(200);
    return { group, userId, chartName: 'c1', deviceId, time: seededTime };
  }

  for (const route of routes) {
    it(`${route.key}: never a 5xx, a stack or a hang; a refused request changes nothing`, async () => {
      const pool = await seedPool();
      const example = exampleOf(route, pool);
      const baseNames = [pool.group, pool.userId, pool.deviceId, 'pump_1'];
      await fc.assert(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
          const wire = toWire(example, mutations);
          const names = new Set([...baseNames, ...wire.names.filter((name) => name.length <= 5000)]);
          const before = await snapshot(store, names);
          const answer = await send(api.url, wire);
          tally.requests += 1;
          tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1);
          tally.slowestMs = Math.max(tally.slowestMs, answer.ms);
          const what = `${wire.method} ${wire.path.slice(0, 300)} → ${answer.status} ${answer.text.slice(0, 200)}`;
          expect(answer.status, what).to.be.within(200, 499);
          expect(answer.ms, what).to.be.below(ANSWER_BOUND_MS);
          expect(answer.text, what).to.not.match(stackTrace);
          if (
            answer.status >= 400 &&
            wire.method !== 'HEAD' &&
            answer.contentType.startsWith('application/json')
          ) {
            const parsed = JSON.parse(answer.text) as Record<string, unknown>;
            expect(parsed, what).to.satisfy(
              (body: Record<string, unknown>) =>
                typeof body['message'] === 'string' || typeof body['error'] === 'string',
            );
          }
          if (answer.status >= 400)
            expect(await snapshot(store, names), `${what}: stored data changed`).to.equal(before);
        }),
        { numRuns: RUNS_PER_ROUTE, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
      // The process is still up and serving.
      expect((await api.get('/')).text).to.equal('Running...');
    });
  }

  it('when the request line and headers exceed Node’s limit, then 431 and the server keeps serving', async () => {
    const answer = await send(api.url, {
      method: 'GET',
      path: `/api/group/checkgroup?group=${'a'.repeat(20_000)}`,
      headers: {},
      names: [],
    }).catch((error: unknown) => error);
    // Node answers 431 and closes; either way nothing reaches the routes and the server stays up.
    if (!(answer instanceof Error)) expect((answer as Answer).status).to.equal(431);
    expect((await api.get('/')).text).to.equal('Running...');
  });
});
