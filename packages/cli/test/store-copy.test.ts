import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mongoSettingsFromEnv, MongoStore } from '@hortus/adapter-mongo';
import { SqliteStore } from '@hortus/adapter-sqlite';
import { type StoreCopyResult } from '@hortus/cli';
import { engineStateKey, type Repositories } from '@hortus/core';
import { Capture, dropTestDatabase, hortus, type Outcome, scratchDataDir } from './harness.js';

const uri = process.env['MONGODB_URI']?.trim() ?? '';
const skipReason =
  ' [skipped: MONGODB_URI is unset; start the test server with eval "$(bash scripts/ferretdb.sh start)"]';
const withMongo = uri === '' ? it.skip : it;
const when = (title: string): string => `${title}${uri === '' ? skipReason : ''}`;

const PASSWORD = 'correct horse battery';

function mongoEnv(): { MONGODB_URI: string } {
  const url = new URL(uri);
  url.pathname = `/storecopy_${randomBytes(4).toString('hex')}`;
  return { MONGODB_URI: url.toString() };
}

async function* typed(text: string): AsyncIterable<string> {
  yield text;
}

/**
 * The demo's day of readings, 7 topics every 5 minutes, is exact; its 4 derived series (VPD, dew point, PPFD,
 * DLI) hold up to one a window less, depending on where the day's windows fall against the clock.
 */
const DEMO_RAW_READINGS = 7 * 288;
const DEMO_DERIVED_READINGS = 4 * 288;

/** A store with the demo greenhouse, a user who can log in, and a firmware image. */
async function fill(env: Record<string, string>): Promise<void> {
  expect((await hortus(undefined, ['seed', '--demo'], { env })).code).to.equal(0);
  const created = await hortus(
    undefined,
    ['user', 'create', '--first-name', 'Ana', '--last-name', 'Grower', '--email', 'ana@example.com'].concat([
      '-g',
      'demo',
      '--password-stdin',
    ]),
    { env, stdin: typed(`${PASSWORD}\n`) },
  );
  expect(created.code, created.stderr).to.equal(0);
  const directory = scratchDataDir();
  mkdirSync(directory, { recursive: true });
  const image = join(directory, 'image.bin');
  writeFileSync(image, randomBytes(4096));
  const published = await hortus(undefined, ['firmware', 'publish', image, '--version', '1.2.3'], { env });
  expect(published.code, published.stderr).to.equal(0);
  const key = await hortus(undefined, ['keys', 'create', '-n', 'dashboard', '-k', 'client', '-g', 'demo'], {
    env,
  });
  expect(key.code, key.stderr).to.equal(0);
  const notify = await hortus(
    undefined,
    ['group', 'notify', 'demo', '--add-webhook', 'https://hooks.example.com/hortus'],
    { env },
  );
  expect(notify.code, notify.stderr).to.equal(0);
  // Two switches: the action history goes with the store.
  for (const value of ['on', 'off']) {
    const set = await hortus(undefined, ['action', 'set', 'pump_1', value, '-g', 'demo'], { env });
    expect(set.code, set.stderr).to.equal(0);
  }
  // An invitation is signed with the store's token key: the server secret the copy must carry over.
  const invited = await hortus(undefined, ['user', 'invite', 'ben@example.com', '-g', 'demo'], { env });
  expect(invited.code, invited.stderr).to.equal(0);
}

/** Opens the store a test environment (or a SQLite file) names, for what no command writes or lists. */
async function withRepositories<T>(
  env: Record<string, string>,
  use: (repositories: Repositories) => Promise<T>,
): Promise<T> {
  const settings = mongoSettingsFromEnv(env);
  const store =
    settings === undefined
      ? SqliteStore.fromSettings({
          file: env['SQLITE_FILE'] ?? join(env['HORTUS_DATA_DIR'] ?? '', 'hortus.db'),
        })
      : MongoStore.fromSettings(settings);
  await store.start();
  try {
    return await use(store.repositories());
  } finally {
    await store.close();
  }
}

/**
 * What the server writes while it runs, written here directly: alert messages (one delivered, one waiting),
 * automation events, the engine's claim of a time slot, and a box waiting to be registered.
 */
async function fillQueues(env: Record<string, string>): Promise<void> {
  await withRepositories(env, async ({ alertOutbox, automationLog, devices, engineState, stages }) => {
    const at = new Date('2026-05-01T06:00:00Z');
    const [sent] = await alertOutbox.enqueue(
      ['too warm', 'too dry'].map((text) => ({
        group: 'demo',
        event: 'opened' as const,
        channel: {
          type: 'webhook' as const,
          url: 'https://hooks.example.com/hortus',
          secret: 's'.repeat(32),
        },
        subject: text,
        text,
        payload: { group: 'demo', message: text },
        createdAt: at,
      })),
    );
    await alertOutbox.markDelivered(sent?.id ?? '', at);
    for (const value of ['on', 'off', 'on']) {
      await automationLog.record({
        ...{ group: 'demo', object: 'pump_1', value, previousValue: value === 'on' ? 'off' : 'on', at },
        ...{ trigger: 'time' as const, rule: `06:00 every day -> ${value}`, slot: at },
      });
    }
    await devices.recordPending({ boxId: 'nexabox-9', address: '192.0.2.9', at }, 10);
    const slot = engineStateKey('slot', 'demo', 'pump_1', at.toISOString());
    await engineState.compareAndSet(slot, 0, { fired: false }, at);
    await engineState.compareAndSet(slot, 1, { fired: true }, at);
    const recipe = {
      name: 'lettuce',
      stages: [{ name: 'seedling', days: 11, vpd: { max: 1.5 }, rules: [] }],
    };
    await stages.compareAndSet(
      { group: 'demo', recipe, stage: 'seedling', startedAt: at, applied: true, appliedAt: at },
      0,
    );
  });
}

/** The queues as each store lists them, for comparing a copy with its source. */
async function queues(env: Record<string, string>): Promise<Record<string, unknown[]>> {
  return withRepositories(env, async ({ alertOutbox, automationLog, devices, engineState, stages }) => ({
    outbox: await alertOutbox.listCopies(undefined, 100),
    automationLog: await automationLog.listCopies(undefined, 100),
    pending: await devices.listPending(),
    engineState: await engineState.list(),
    stages: await stages.list(),
  }));
}

/**
 * The same records in both stores. Records written within one second may list in another order: MongoDB
 * orders them by id, and SQLite's ids are random within a second.
 */
async function expectSameQueues(
  copied: Record<string, string>,
  source: Record<string, string>,
): Promise<void> {
  const [target, original] = await Promise.all([queues(copied), queues(source)]);
  for (const [name, records] of Object.entries(original)) {
    expect(records.length, name).to.be.greaterThan(0);
    expect(target[name], name).to.have.deep.members(records);
  }
}

async function copy(
  env: Record<string, string>,
  to: string,
  extra: readonly string[] = [],
  io: Partial<Parameters<typeof hortus>[2]> = {},
): Promise<Outcome & { report: StoreCopyResult }> {
  const outcome = await hortus(
    undefined,
    ['store', 'copy', '--to', to, '--json', '--check-login', 'ana@example.com', '--password-stdin', ...extra],
    { env, stdin: typed(`${PASSWORD}\n`), ...io },
  );
  return { ...outcome, report: JSON.parse(outcome.stdout || 'null') as StoreCopyResult };
}

/** source and target counts of each resource, from the report. */
function counts(report: StoreCopyResult): Record<string, [number, number]> {
  return Object.fromEntries(report.resources.map((entry) => [entry.resource, [entry.source, entry.target]]));
}

/** The counts are as expected, and the readings the same on both sides, the demo's day and its derived series. */
function expectCounts(report: StoreCopyResult): number {
  const { readings: [source = 0, target] = [], ...others } = counts(report);
  const expectedOthers = Object.fromEntries(
    Object.entries(expectedCounts).filter(([resource]) => resource !== 'readings'),
  );
  expect(others).to.deep.equal(expectedOthers);
  expect(target, 'readings on the target').to.equal(source);
  expect(source).to.be.within(
    DEMO_RAW_READINGS + DEMO_DERIVED_READINGS - 8,
    DEMO_RAW_READINGS + DEMO_DERIVED_READINGS,
  );
  return source;
}

const expectedCounts = {
  groups: [1, 1],
  users: [2, 2],
  accessKeys: [1, 1],
  devices: [2, 2],
  pendingBoxes: [1, 1],
  actions: [4, 4],
  actionHistory: [2, 2],
  alertSettings: [1, 1],
  outbox: [2, 2],
  notifications: [1, 1],
  historyCharts: [1, 1],
  firmware: [1, 1],
  serverSecrets: [1, 1],
  // The slot claimed in fillQueues (on the target, the slot does not fire again), and the demo group's
  // derivation cursor (its derived series are on: issue 35).
  engineState: [2, 2],
  stages: [1, 1],
  automationLog: [3, 3],
  readings: 'the demo day and its derived series, the same on both sides (expectCounts)',
};

describe('hortus store copy', function () {
  this.timeout(120_000);
  const databases: Record<string, string>[] = [];
  after(async () => {
    for (const env of databases) await dropTestDatabase(env);
  });

  withMongo(
    when(
      'when a SQLite store is copied to MongoDB, then every resource is there in equal counts, records as they were, and its user logs in there',
    ),
    async () => {
      const sqlite = { HORTUS_DATA_DIR: scratchDataDir() };
      const mongo = mongoEnv();
      databases.push(mongo);
      await fill(sqlite);
      await fillQueues(sqlite);

      const { code, stderr, report } = await copy(sqlite, mongo.MONGODB_URI);

      expect(code, stderr).to.equal(0);
      expectCounts(report);
      expect(report).to.include({ complete: true, interrupted: false, credentialsMatch: true });
      expect(report.loggedIn).to.equal('ana@example.com');
      const listed = async (env: Record<string, string>, argv: string[]): Promise<unknown[]> => {
        const answer = JSON.parse((await hortus(undefined, [...argv, '--json'], { env })).stdout) as unknown;
        return Array.isArray(answer) ? answer : [answer];
      };
      for (const argv of [
        ['user', 'list'],
        ['group', 'list'],
        ['action', 'list', '-g', 'demo'],
        ['action', 'history', '-g', 'demo'],
        ['firmware', 'list'],
        ['keys', 'list'],
        ['device', 'list'],
        ['group', 'notify', 'demo'],
      ]) {
        // The same records; only `user list` order may differ (each store lists in its own stored order).
        expect(await listed(mongo, argv), argv.join(' ')).to.have.deep.members(await listed(sqlite, argv));
      }
      // Notifications come with their state but new ids (clients ignore them by time, not by id).
      const withoutIds = async (env: Record<string, string>): Promise<unknown[]> =>
        (await listed(env, ['notifications', 'list', '-g', 'demo'])).map((notification) => ({
          ...(notification as Record<string, unknown>),
          id: undefined,
        }));
      expect(await withoutIds(mongo)).to.deep.equal(await withoutIds(sqlite));
      // The outbox (with its statuses and the secret a waiting message still needs), the automation log
      // and the waiting box, as they were.
      await expectSameQueues(mongo, sqlite);
      // Progress went to stderr as JSON lines (not a terminal), with the total where it is known.
      expect(stderr).to.match(/"event":"store.copy.progress","resource":"users","copied":2,"total":2/u);
    },
  );

  withMongo(
    when(
      'when a MongoDB store is copied to SQLite and the first run is interrupted, then the second run completes it without duplicating anything',
    ),
    async () => {
      const mongo = mongoEnv();
      databases.push(mongo);
      await fill(mongo);
      await fillQueues(mongo);
      const target = join(scratchDataDir(), 'copy.db');
      const signals = new EventEmitter();
      // Ctrl-C as soon as the readings start: the copy stops after the page in flight.
      const stderr = new Capture();
      stderr.write = (chunk: string): boolean => {
        stderr.text += chunk;
        if (chunk.includes('"resource":"readings"')) signals.emit('SIGINT');
        return true;
      };

      const first = await copy(mongo, target, ['--page-size', '100'], { signals, stderr });
      const second = await copy(mongo, target, ['--page-size', '100']);

      expect(first.code).to.equal(5);
      expect(first.report.interrupted).to.equal(true);
      const firstReadings = first.report.resources.find((entry) => entry.resource === 'readings');
      expect(firstReadings?.complete).to.equal(false);
      expect(second.code, second.stderr).to.equal(0);
      const copied = expectCounts(second.report);
      const readings = second.report.resources.find((entry) => entry.resource === 'readings');
      expect(readings?.written).to.equal(copied - (firstReadings?.written ?? 0));
      expect(second.report.loggedIn).to.equal('ana@example.com');
      await expectSameQueues({ SQLITE_FILE: target }, mongo);
    },
  );

  it('when --password-stdin reads nothing, then the copy stops with exit 2 naming that option, before anything is written', async () => {
    const dataDir = scratchDataDir();
    const to = join(scratchDataDir(), 'copy.db');

    const outcome = await hortus(
      undefined,
      ['store', 'copy', '--to', to, '--check-login', 'ana@example.com', '--password-stdin'],
      { env: { HORTUS_DATA_DIR: dataDir }, stdin: typed('\n') },
    );

    expect(outcome.code).to.equal(2);
    expect(outcome.stderr).to.include('--password-stdin read an empty password');
    expect(existsSync(to)).to.equal(false);
  });

  it('when the target is the configured store itself, then the copy is refused before anything is written', async () => {
    const dataDir = scratchDataDir();
    await hortus(undefined, ['seed', '--demo'], { env: { HORTUS_DATA_DIR: dataDir } });

    const outcome = await hortus(undefined, ['store', 'copy', '--to', join(dataDir, 'hortus.db')], {
      env: { HORTUS_DATA_DIR: dataDir },
    });

    expect(outcome.code).to.equal(2);
    expect(outcome.stderr).to.include('cannot be copied onto itself');
  });

  it('when the source file is open in another process and holds no users, then the copy warns of the server and says there were no users to compare', async () => {
    const dataDir = scratchDataDir();
    await hortus(undefined, ['group', 'create', 'g1'], { env: { HORTUS_DATA_DIR: dataDir } });
    const to = join(scratchDataDir(), 'copy.db');
    const alone = await hortus(undefined, ['store', 'copy', '--to', to], {
      env: { HORTUS_DATA_DIR: dataDir },
    });
    // Another process holding the file open, as a running server does (WAL: a shared lock on the file).
    const server = new Database(join(dataDir, 'hortus.db'));
    server.prepare('SELECT count(*) FROM sqlite_master').get();
    try {
      const busy = await hortus(undefined, ['store', 'copy', '--to', join(scratchDataDir(), 'copy.db')], {
        env: { HORTUS_DATA_DIR: dataDir },
      });

      expect(alone.code, alone.stderr).to.equal(0);
      expect(alone.stderr).not.to.include('warning');
      expect(alone.stdout).to.include('password hashes: no users to compare');
      expect(alone.stdout).not.to.include('identical');
      expect(busy.code, busy.stderr).to.equal(0);
      expect(busy.stderr).to.include('warning').and.include('is open in another process');
    } finally {
      server.close();
    }
  });

  it("when the target holds another installation's data, then the copy is refused unless --force", async () => {
    const source = { HORTUS_DATA_DIR: scratchDataDir() };
    const other = { HORTUS_DATA_DIR: scratchDataDir() };
    await hortus(undefined, ['seed', '--demo'], { env: source });
    await hortus(undefined, ['seed', '--demo'], { env: other });
    const target = join(other.HORTUS_DATA_DIR, 'hortus.db');

    const refused = await hortus(undefined, ['store', 'copy', '--to', target], { env: source });
    const forced = await hortus(undefined, ['store', 'copy', '--to', target, '--force', '--json'], {
      env: source,
    });

    expect(refused.code).to.equal(4);
    expect(refused.stderr).to.include("another installation's data").and.include('--force');
    expect(forced.code, forced.stderr).to.equal(0);
    const groups = JSON.parse((await hortus(undefined, ['group', 'list', '--json'], { env: other })).stdout);
    const sourceGroups = JSON.parse(
      (await hortus(undefined, ['group', 'list', '--json'], { env: source })).stdout,
    );
    expect(groups).to.deep.equal(sourceGroups);
  });
});
