import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { hashSync } from 'bcryptjs';
import { MongoStore } from '@hortus/adapter-mongo';
import {
  createCoreModule,
  defaultCoreSettings,
  ENGINE_STATE_REPOSITORY,
  type EngineStateRepository,
  engineStateKey,
  RunAutomations,
} from '@hortus/core';
import { loadConfig, type MigrationReport, type RunningServer, startServer } from '@hortus/cli';
import { Container } from 'inversify';
import { type Db, MongoClient, ObjectId } from 'mongodb';
import { hortus } from './harness.js';

const uri = process.env['MONGODB_URI']?.trim() ?? '';
const withMongo = uri === '' ? it.skip : it;
const when = (title: string): string =>
  `${title}${uri === '' ? ' [skipped: MONGODB_URI is unset; eval "$(bash scripts/ferretdb.sh start)"]' : ''}`;

const PASSWORD_A = 'Anna-lower-2019!';
const PASSWORD_B = 'Anna-Upper-2020!';
const oid = (n: number): ObjectId =>
  ObjectId.createFromHexString(`65b0000000000000000000${n.toString(16).padStart(2, '0')}`);
const annaLower = oid(1);
const annaUpper = oid(2);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

function dbUri(name: string): string {
  const url = new URL(uri);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * What a database written by the original service itself holds beyond its usual shapes: accounts whose
 * e-mails differ only in case, rules typed by hand, its hourly check's records, its own group-less
 * alarm, the hour repeated when the clocks go back (in _id order), and an action whose latest time slot
 * disagrees with its value. Nothing in it needs the operator.
 */
async function writeQuirks(db: Db): Promise<void> {
  await db.collection('groups').insertMany([
    { _id: oid(10), name: 'gh-a', package: 'small', employee: 'Anna Schmidt', settings: [] },
    { _id: oid(11), name: 'gh-b', package: 'small', employee: [], settings: [] },
  ]);
  // The original matched e-mails case-sensitively: two accounts, in different groups.
  await db.collection('users').insertMany([
    {
      _id: annaLower,
      firstName: 'Anna',
      lastName: 'Schmidt',
      email: 'anna.schmidt@example.com',
      password: hashSync(PASSWORD_A, 4),
      group: 'gh-a',
    },
    {
      _id: annaUpper,
      firstName: 'Anna',
      lastName: 'Schmidt',
      email: 'Anna.Schmidt@Example.com',
      password: hashSync(PASSWORD_B, 4),
      group: 'gh-b',
    },
  ]);
  await db.collection('actions').insertMany([
    {
      _id: oid(30),
      group: 'gh-a',
      object: 'fan_1',
      value: 'on',
      automations: [
        {
          timeAutomations: [
            { action: 'on', time: '7:5', frequency: 'Monday' },
            { action: 'off', time: '', frequency: 'every day' },
          ],
          sensorAutomations: [
            { action: 'on', sensor: 'temperature', condition: 'above', value: '28,5' },
            { action: 'off', sensor: 'temperature', condition: 'equal', value: '20' },
          ],
        },
      ],
    },
    // Its latest slot says on; growers switched it off by hand afterwards.
    {
      _id: oid(31),
      group: 'gh-a',
      object: 'pump_1',
      value: 'off',
      automations: [{ timeAutomations: [{ action: 'on', time: '00:00', frequency: 'every day' }] }],
    },
  ]);
  const temperature = 'esp/air/temperature';
  const at = (hhmm: string): Date => new Date(`2024-10-27T${hhmm}:00.000Z`);
  await db.collection('datas').insertMany([
    // Berlin, 27 October 2024: the boxes' clocks showed 02:00-02:59 twice, stored in _id order.
    { _id: oid(40), time: at('02:00'), topic: temperature, value: '14.0', group: 'gh-a' },
    { _id: oid(41), time: at('02:30'), topic: temperature, value: '13.5', group: 'gh-a' },
    { _id: oid(42), time: at('02:00'), topic: temperature, value: '13.0', group: 'gh-a' },
    { _id: oid(43), time: at('02:30'), topic: temperature, value: '12.5', group: 'gh-a' },
    { _id: oid(44), time: at('03:00'), topic: temperature, value: '12.0', group: 'gh-a' },
    // Stored twice: a real duplicate.
    { _id: oid(45), time: at('03:00'), topic: temperature, value: '12.0', group: 'gh-a' },
  ]);
  await db.collection('notifications').insertMany([
    { _id: oid(50), group: 'gh-a', time: at('03:00'), message: 'Temperature low', ignore: 'false' },
    { _id: oid(51), group: 'gh-a', time: at('04:00'), message: 'hourly check', ignore: 'active' },
    { _id: oid(52), group: 'gh-a', time: at('05:00'), message: 'hourly check', ignore: 'passive' },
  ]);
  // The one alarm the original writes itself: no group.
  await db
    .collection('alarms')
    .insertOne({ _id: oid(60), sensor: 'temperature', value: '35', time: at('06:00') });
  await db.collection('history').insertOne({
    _id: oid(70),
    userId: annaUpper.toHexString(),
    charts: [{ chartId: 'c1', chartName: 'Upper', chartData: { type: 'line', max_count: 50 } }],
  });
}

function collectionOf(report: MigrationReport, name: string): MigrationReport['collections'][number] {
  const found = report.collections.find((c) => c.collection === name);
  if (found === undefined) throw new Error(`no ${name} in the report`);
  return found;
}

async function logIn(server: RunningServer, email: string, password: string): Promise<Response> {
  return fetch(`${server.url}/api/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
}

/** Each account logs in with its own password and no other, and lands in its own group. */
async function expectBothAccounts(server: RunningServer): Promise<void> {
  const lower = await logIn(server, 'anna.schmidt@example.com', PASSWORD_A);
  expect(lower.status).to.equal(200);
  expect(((await lower.json()) as { data: object }).data).to.include({
    userId: annaLower.toHexString(),
    group: 'gh-a',
  });
  const upper = await logIn(server, 'Anna.Schmidt@Example.com', PASSWORD_B);
  expect(upper.status).to.equal(200);
  expect(((await upper.json()) as { data: object }).data).to.include({
    userId: annaUpper.toHexString(),
    group: 'gh-b',
  });
  expect((await logIn(server, 'Anna.Schmidt@Example.com', PASSWORD_A)).status).to.equal(401);
  expect((await logIn(server, 'anna.schmidt@example.com', PASSWORD_B)).status).to.equal(401);
}

describe('hortus migrate: what a database written by the original service itself holds', function () {
  this.timeout(90_000);
  let client: MongoClient;
  let source: Db;
  let sourceUri: string;
  const drop: Db[] = [];

  beforeEach(async function () {
    if (uri === '') return;
    client = new MongoClient(uri);
    await client.connect();
    const name = `original_${randomBytes(4).toString('hex')}`;
    source = client.db(name);
    drop.push(source);
    sourceUri = dbUri(name);
    await writeQuirks(source);
  });

  afterEach(async function () {
    if (uri === '') return;
    for (const db of drop.splice(0)) await db.dropDatabase();
    await client.close();
  });

  withMongo(
    when(
      'when it is migrated into MongoDB, then it exits 0, both case-differing accounts log in, and every quirk is reported',
    ),
    async () => {
      const dbName = `hortus_${randomBytes(4).toString('hex')}`;
      const store = MongoStore.fromSettings({ uri, dbName });
      await store.start();
      const container = new Container();
      container.load(createCoreModule(defaultCoreSettings), store.module());
      try {
        const { code, stdout, stderr } = await hortus(container, [
          'migrate',
          '--from',
          sourceUri,
          '--time-zone',
          'Europe/Berlin',
          '--json',
        ]);

        expect(code, stderr).to.equal(0);
        const report = JSON.parse(stdout) as MigrationReport;
        expect(report.failure).to.equal(null);
        const users = collectionOf(report, 'users');
        expect(users).to.include({ written: 2, alreadyThere: 0, rejected: 0 });
        expect(users.notes).to.deep.equal([
          {
            id: annaUpper.toHexString(),
            text:
              `e-mail differs only in case from user ${annaLower.toHexString()} (anna.schmidt@example.com): ` +
              'kept as its own account, which logs in with its e-mail as written',
          },
        ]);
        expect(collectionOf(report, 'actions').notes.map((n) => n.text)).to.deep.equal([
          'rule left out: automations[0].timeAutomations[1].time must not be empty',
          'rule left out: automations[0].sensorAutomations[1].condition must be one of: above, less than, below',
        ]);
        expect(collectionOf(report, 'alarms')).to.include({ skipped: 1, rejected: 0, written: 0 });
        expect(collectionOf(report, 'datas')).to.include({ written: 5, duplicates: 1, rejected: 0 });
        expect(collectionOf(report, 'datas').summary[0]).to.match(/^2 readings of the hour repeated/u);
        expect(collectionOf(report, 'notifications')).to.include({ written: 3 });
        expect(collectionOf(report, 'notifications').summary[0]).to.match(/^2 records of the original's/u);
        expect(collectionOf(report, 'history')).to.include({ written: 1 });
        expect(collectionOf(report, 'history').notes).to.deep.equal([]);
        expect(report.cutOver).to.be.a('string');

        // The cut-over is the engine's last run: the slot from before the move does not switch the pump.
        // fan_1's sensor rules read only readings from 2024, so it goes to its safe state (off), and only that.
        const lastRun = await container
          .get<EngineStateRepository>(ENGINE_STATE_REPOSITORY)
          .get(engineStateKey('engine', 'lastRun'));
        expect(lastRun?.value['at']).to.equal(Date.parse(report.cutOver ?? ''));
        const engine = container.get(RunAutomations);
        const atCutOver = await engine.execute(new Date(Number(lastRun?.value['at'])));
        expect(atCutOver.map((event) => [event.object, event.value, event.trigger])).to.deep.equal([
          ['fan_1', 'off', 'safe'],
        ]);
        // Without the cut-over the engine would have caught the midnight slot up.
        const withoutCutOver = await engine.execute(new Date(0));
        expect(withoutCutOver.map((event) => [event.object, event.value])).to.deep.include(['pump_1', 'on']);

        const server = await startServer(
          loadConfig({
            MONGODB_URI: uri,
            MONGODB_DB: dbName,
            PORT: '0',
            HOST: '127.0.0.1',
            AUTOMATIONS: 'off',
          }),
          { logger: silent },
        );
        try {
          await expectBothAccounts(server);
          const get = async (path: string): Promise<unknown> => {
            const response = await fetch(`${server.url}${path}`);
            expect(response.status, path).to.equal(200);
            return response.json();
          };
          const charts = (await get(`/api/historyChart/all/${annaUpper.toHexString()}`)) as {
            charts: { chartName: string }[];
          };
          expect(charts.charts.map((c) => c.chartName)).to.deep.equal(['Upper']);
          const actions = (await get('/api/actions/current_state?group=gh-a')) as {
            message: { object: string; automations: unknown }[];
          };
          expect(actions.message.find((a) => a.object === 'fan_1')?.automations).to.deep.equal([
            {
              timeAutomations: [{ action: 'on', time: '07:05', frequency: 'monday' }],
              sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'above', value: '28.5' }],
            },
          ]);
          const open = (await get('/api/notification/latestdata/notifications?groupId=gh-a')) as {
            message: string;
          }[];
          // The migrated alert, and the safe mode the engine's run at the cut-over opened above.
          expect(open.map((n) => n.message)).to.deep.equal([
            'Safe mode: fan_1 is switched off: no fresh reading of esp/air/temperature for 90m',
            'Temperature low',
          ]);
          const readings = (await get('/api/data/All/temperature?groupId=gh-a')) as { time: string }[];
          expect(readings.map((r) => r.time).sort()).to.deep.equal([
            '2024-10-27T00:00:00.000Z',
            '2024-10-27T00:30:00.000Z',
            '2024-10-27T01:00:00.000Z',
            '2024-10-27T01:30:00.000Z',
            '2024-10-27T02:00:00.000Z',
          ]);
        } finally {
          await server.close();
        }
      } finally {
        await store.db.dropDatabase();
        await store.close();
      }
    },
  );

  withMongo(
    when('when it is migrated into the SQLite file, then it exits 0 and both accounts log in there too'),
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'hortus-quirks-'));
      try {
        const { code, stderr } = await hortus(
          undefined,
          ['migrate', '--from', sourceUri, '--time-zone', 'Europe/Berlin', '--json'],
          { env: { HORTUS_DATA_DIR: dataDir } },
        );
        expect(code, stderr).to.equal(0);
        const server = await startServer(
          loadConfig({ HORTUS_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUTOMATIONS: 'off' }),
          { logger: silent },
        );
        try {
          await expectBothAccounts(server);
        } finally {
          await server.close();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  withMongo(
    when(
      "when MONGODB_TIMEOUT_MS is a request's deadline, then the copy into MongoDB still runs on bulk deadlines",
    ),
    async () => {
      const readings = Array.from({ length: 6000 }, (_, i) => ({
        _id: new ObjectId(),
        time: new Date(Date.UTC(2024, 0, 1) + i * 10_000),
        topic: 'esp/air/humidity',
        value: String(40 + (i % 20)),
        group: 'gh-a',
      }));
      await source.collection('datas').insertMany(readings);
      const dbName = `hortus_${randomBytes(4).toString('hex')}`;
      try {
        // 100 ms is the shortest deadline allowed: far less than a batch of 5000 readings takes.
        const { code, stdout, stderr } = await hortus(undefined, ['migrate', '--from', sourceUri, '--json'], {
          env: { MONGODB_URI: dbUri(dbName), MONGODB_DB: dbName, MONGODB_TIMEOUT_MS: '100' },
        });

        expect(code, stderr).to.equal(0);
        expect(collectionOf(JSON.parse(stdout) as MigrationReport, 'datas')).to.include({ written: 6003 });
        expect(await client.db(dbName).collection('readings').countDocuments()).to.equal(6003);
      } finally {
        await client.db(dbName).dropDatabase();
      }
    },
  );

  withMongo(
    when('when a dry run meets accounts that differ only in case, then its report names both'),
    async () => {
      const { code, stdout } = await hortus(undefined, [
        'migrate',
        '--from',
        sourceUri,
        '--dry-run',
        '--json',
      ]);

      expect(code).to.equal(0);
      expect(collectionOf(JSON.parse(stdout) as MigrationReport, 'users').notes).to.deep.equal([
        {
          id: annaUpper.toHexString(),
          text:
            `e-mail differs only in case from user ${annaLower.toHexString()} (anna.schmidt@example.com): ` +
            'will be kept as its own account',
        },
      ]);
    },
  );

  withMongo(
    when(
      'when the source changed after the first run, then a re-run notes each difference, and --update brings them over',
    ),
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'hortus-rerun-'));
      const env = { HORTUS_DATA_DIR: dataDir };
      const run = (...extra: string[]): ReturnType<typeof hortus> =>
        hortus(undefined, ['migrate', '--from', sourceUri, '--json', ...extra], { env });
      try {
        expect((await run()).code).to.equal(0);
        // Meanwhile in the old service: the fan is switched off, the chart edited, a box's clock runs ahead.
        await source.collection('actions').updateOne({ _id: oid(30) }, { $set: { value: 'off' } });
        await source
          .collection('history')
          .updateOne({ _id: oid(70) }, { $set: { 'charts.0.chartData.max_count': 80 } });
        await source.collection('datas').insertOne({
          _id: oid(46),
          time: new Date(Date.now() + 86_400_000),
          topic: 'esp/air/temperature',
          value: '12',
          group: 'gh-a',
        });

        const noted = await run();

        expect(noted.code).to.equal(2);
        const report = JSON.parse(noted.stdout) as MigrationReport;
        expect(collectionOf(report, 'actions').notes.map((n) => n.text)).to.include(
          "value differs: kept Hortus's on (original: off); --update brings it over",
        );
        expect(collectionOf(report, 'history').notes.map((n) => n.text)).to.deep.equal([
          "chart Upper differs from the original's: kept Hortus's; --update brings it over",
        ]);
        expect(collectionOf(report, 'datas').rejections.map((r) => r.id)).to.deep.equal([
          oid(46).toHexString(),
        ]);
        expect(collectionOf(report, 'datas').rejections[0]?.text).to.include('is in the future');

        const updated = JSON.parse((await run('--update')).stdout) as MigrationReport;
        expect(collectionOf(updated, 'actions').notes.map((n) => n.text)).to.include(
          'value off brought over from the original (Hortus had on)',
        );
        const actions = await hortus(undefined, ['action', 'list', '-g', 'gh-a', '--json'], { env });
        const listed = JSON.parse(actions.stdout) as { object: string; value: string }[];
        expect(listed.find((a) => a.object === 'fan_1')?.value).to.equal('off');
        const after = JSON.parse((await run()).stdout) as MigrationReport;
        expect(collectionOf(after, 'history').notes).to.deep.equal([]);
        expect(collectionOf(after, 'actions').notes.map((n) => n.text)).to.not.include(
          "value differs: kept Hortus's on (original: off); --update brings it over",
        );
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});
