import { Agent, request as httpRequest } from 'node:http';
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
  RequestPasswordReset,
} from '@hortus/core';
import { BcryptPasswordHasher } from '@hortus/identity';
import fc from 'fast-check';
import { expect, FakeCodeHost, startTestServer, type TestServer, testStore } from './harness.js';
import {
  exampleOf,
  PASSWORD,
  type Pool,
  routes,
  seededTime,
  temperature,
  type WireRequest,
} from './fuzz-requests.js';
import { mutation, toWire } from './fuzz-mutations.js';

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
const ANSWER_BOUND_MS = testStore === 'mongodb' ? 15_000 : 5000;

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
  // Each Mongo-pass request costs two snapshots of tens of queries on FerretDB, slow on a loaded machine.
  this.timeout(testStore === 'mongodb' ? 300_000 : 120_000);
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

  const resetsSettled = (): Promise<void> => api.container.get(RequestPasswordReset).settled();

  for (const route of routes) {
    it(`${route.key}: never a 5xx, a stack or a hang; a refused request changes nothing`, async () => {
      const pool = await seedPool();
      const example = exampleOf(route, pool);
      const baseNames = [pool.group, pool.userId, pool.deviceId, 'pump_1'];
      await fc.assert(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
          const wire = toWire(example, mutations);
          const names = new Set([...baseNames, ...wire.names.filter((name) => name.length <= 5000)]);
          // A password reset's look-up and token write come after its answer (so timing tells nothing):
          // an earlier accepted reset must not land between the two snapshots of this request.
          await resetsSettled();
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
          if (answer.status >= 400) {
            await resetsSettled();
            expect(await snapshot(store, names), `${what}: stored data changed`).to.equal(before);
          }
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
