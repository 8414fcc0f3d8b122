import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { compareSync, hashSync } from 'bcryptjs';
import { MongoStore } from '@hortus/adapter-mongo';
import { createCoreModule, defaultCoreSettings } from '@hortus/core';
import { loadConfig, type MigrationReport, type RunningServer, startServer } from '@hortus/cli';
import { Container } from 'inversify';
import { BSON, type Db, type Document, MongoClient, ObjectId } from 'mongodb';
import { Capture, hortus } from './harness.js';

const uri = process.env['MONGODB_URI']?.trim() ?? '';
const skipReason =
  ' [skipped: MONGODB_URI is unset; start the test server with eval "$(bash scripts/ferretdb.sh start)"]';
const withMongo = uri === '' ? it.skip : it;
const when = (title: string): string => `${title}${uri === '' ? skipReason : ''}`;

const OLD_PASSWORD = 'Greenhouse-2019!';
const oid = (n: number): ObjectId =>
  ObjectId.createFromHexString(`65a0000000000000000000${n.toString(16).padStart(2, '0')}`);
const userId = oid(1);
/** Local wall time of the boxes (Europe/Berlin, summer: UTC+2), stored labelled as UTC. */
const labelled = (hhmm: string): Date => new Date(`2024-05-01T${hhmm}:00.000Z`);

function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

function dbUri(name: string): string {
  const url = new URL(uri);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The original service's collections with its exact shapes and quirks. */
async function writeOriginal(db: Db, hash: string): Promise<void> {
  await db.collection('groups').insertMany([
    {
      _id: oid(10),
      name: 'gh-1',
      package: 'medium',
      employee: 'Ana Grower, Ben Hill',
      settings: [{ tempMin: 15 }, { tempMax: 30 }, { emailNotification: true }, { email: 'ana@example.org' }],
      __v: 0,
    },
    { _id: oid(11), name: 'gh-2', package: 'big', employee: ['Cy Dee', 'Dee Ek'], settings: [], __v: 0 },
    { _id: oid(12), package: 'small', employee: [] },
  ]);
  await db.collection('users').insertMany([
    {
      _id: userId,
      firstName: 'Ana',
      lastName: 'Grower',
      email: 'ana@example.org',
      password: hash,
      group: 'gh-1',
      __v: 0,
    },
    { _id: oid(2), firstName: 'No', lastName: 'Mail', password: hash, group: 'gh-1' },
  ]);
  await db.collection('devices').insertMany([
    { _id: oid(20), deviceId: '246F28AA0001', group: 'gh-1', type: 'sensor-box', __v: 0 },
    { _id: oid(21), deviceId: 'not a mac!', group: 'gh-1', type: 'sensor-box' },
  ]);
  await db.collection('actions').insertMany([
    {
      _id: oid(30),
      group: 'gh-1',
      object: 'pump_1',
      value: 'on',
      automations: [
        {
          _id: new ObjectId(),
          timeAutomations: [{ _id: new ObjectId(), action: 'on', time: '06:30', frequency: 'every day' }],
          sensorAutomations: [
            { _id: new ObjectId(), action: 'off', sensor: 'humidity', condition: 'above', value: '80' },
          ],
        },
      ],
      __v: 0,
    },
    { _id: oid(31), group: 'gh-1', object: 'led_1', value: 'off', automations: [] },
  ]);
  const temperature = 'esp/air/temperature';
  await db.collection('datas').insertMany([
    { _id: oid(40), time: labelled('14:00'), topic: temperature, value: '23.45', group: 'gh-1' },
    { _id: oid(41), time: labelled('14:05'), topic: temperature, value: '24.1', group: 'gh-1' },
    // The same sample stored twice: no unique index guarded the original.
    { _id: oid(42), time: labelled('14:05'), topic: temperature, value: '24.1', group: 'gh-1' },
    { _id: oid(43), time: labelled('14:10'), topic: temperature, value: 'n/a', group: 'gh-1' },
    { _id: oid(44), time: labelled('14:10'), topic: 'esp/air/humidity', value: '61', group: 'gh-1' },
    { _id: oid(45), time: labelled('14:10'), topic: 'esp/ground/moisture/1', value: ' 40.5 ', group: 'gh-1' },
    { _id: oid(46), time: labelled('14:15'), topic: temperature, value: '19' },
  ]);
  await db.collection('notifications').insertMany([
    {
      _id: oid(50),
      group: 'gh-1',
      time: new Date('2024-05-01T12:06:00.000Z'),
      message: 'Temperature above 24',
      topic: temperature,
      value: '24.1',
      ignore: 'false',
    },
    {
      _id: oid(51),
      group: 'gh-1',
      time: new Date('2024-04-30T08:00:00.000Z'),
      message: 'Old alert',
      ignore: 'true',
    },
  ]);
  await db.collection('alarms').insertMany([
    {
      _id: oid(60),
      group: 'gh-1',
      time: new Date('2024-05-01T12:10:00.000Z'),
      message: 'Moisture low',
      topic: 'esp/ground/moisture/1',
      value: '12',
    },
  ]);
  await db.collection('history').insertMany([
    {
      _id: oid(70),
      userId: userId.toHexString(),
      charts: [
        {
          _id: new ObjectId(),
          chartId: 'c1',
          chartName: 'Climate',
          chartData: {
            type: 'scatter',
            max_count: 500,
            data_interval: 60000,
            update_interval: 15000,
            datasets: [{ _id: new ObjectId(), checked_temperature: true, checked_humidity: true }],
          },
          createdAt: new Date('2024-04-01T10:00:00.000Z'),
          updatedAt: new Date('2024-04-02T10:00:00.000Z'),
        },
        { _id: new ObjectId(), chartName: 'Bare' },
      ],
      __v: 0,
    },
  ]);
  await db
    .collection('tokens')
    .insertMany([{ _id: oid(80), userId, token: 'a'.repeat(64), createdAt: new Date() }]);
}

/** Every document of every collection, in `_id` order, as extended JSON: equal texts mean nothing changed. */
async function snapshot(db: Db): Promise<string> {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  const parts: Document = {};
  for (const name of names) {
    parts[name] = {
      documents: await db.collection(name).find({}).sort({ _id: 1 }).toArray(),
      indexes: (await db.collection(name).indexes()).map((index) => index.name).sort(),
    };
  }
  return BSON.EJSON.stringify(parts, { relaxed: false });
}

interface Target {
  readonly container: Container;
  readonly store: MongoStore;
  readonly dbName: string;
}

async function openTarget(dbName: string): Promise<Target> {
  const store = MongoStore.fromSettings({ uri, dbName });
  await store.start();
  const container = new Container();
  container.load(createCoreModule(defaultCoreSettings), store.module());
  return { container, store, dbName };
}

function collectionOf(report: MigrationReport, name: string): MigrationReport['collections'][number] {
  const found = report.collections.find((c) => c.collection === name);
  if (found === undefined) throw new Error(`no ${name} in the report`);
  return found;
}

const counts = (c: MigrationReport['collections'][number]): Record<string, number> => ({
  read: c.read,
  written: c.written,
  alreadyThere: c.alreadyThere,
  merged: c.merged,
  duplicates: c.duplicates,
  rejected: c.rejected,
});

describe('hortus migrate: moving over from the original service', function () {
  this.timeout(60_000);
  let client: MongoClient;
  let source: Db;
  let sourceUri: string;
  let target: Target;
  let hash: string;
  const dropLater: Db[] = [];

  before(function () {
    if (uri === '') return;
    // A bcrypt hash as the original wrote it: cost 10.
    hash = hashSync(OLD_PASSWORD, 10);
  });

  beforeEach(async function () {
    if (uri === '') return;
    client = new MongoClient(uri);
    await client.connect();
    const sourceName = uniqueName('original');
    source = client.db(sourceName);
    dropLater.push(source);
    sourceUri = dbUri(sourceName);
    target = await openTarget(uniqueName('hortus_target'));
    dropLater.push(target.store.db);
  });

  afterEach(async function () {
    if (uri === '') return;
    for (const db of dropLater.splice(0)) await db.dropDatabase();
    await target.store.close();
    await client.close();
  });

  withMongo(
    when(
      'when the original is migrated with its time zone, then Hortus serves its data, the old password logs in, and the source is untouched',
    ),
    async () => {
      await writeOriginal(source, hash);
      const before = await snapshot(source);

      const { code, stdout, stderr } = await hortus(target.container, [
        'migrate',
        '--from',
        sourceUri,
        '--time-zone',
        'Europe/Berlin',
        '--json',
      ]);

      const report = JSON.parse(stdout) as MigrationReport;
      // Rejected documents make the exit code 2, as with `readings import`; everything else was copied.
      expect(code, stderr).to.equal(2);
      expect(report).to.include({
        complete: true,
        interrupted: false,
        dryRun: false,
        timeZone: 'Europe/Berlin',
      });
      expect(counts(collectionOf(report, 'datas'))).to.deep.equal({
        read: 7,
        written: 4,
        alreadyThere: 0,
        merged: 0,
        duplicates: 1,
        rejected: 2,
      });
      expect(collectionOf(report, 'datas').rejections).to.deep.equal([
        { id: oid(43).toHexString(), text: 'value must be a number, got "n/a"' },
        { id: oid(46).toHexString(), text: 'group must be a string' },
      ]);
      expect(counts(collectionOf(report, 'groups'))).to.include({ read: 3, written: 2, rejected: 1 });
      expect(counts(collectionOf(report, 'users'))).to.include({ read: 2, written: 1, rejected: 1 });
      expect(collectionOf(report, 'users').rejections[0]).to.deep.equal({
        id: oid(2).toHexString(),
        text: 'email is required',
      });
      expect(counts(collectionOf(report, 'devices'))).to.include({ written: 1, rejected: 1 });
      expect(counts(collectionOf(report, 'actions'))).to.include({ written: 2, rejected: 0 });
      expect(counts(collectionOf(report, 'notifications'))).to.include({ written: 2 });
      expect(counts(collectionOf(report, 'alarms'))).to.include({ written: 1 });
      expect(counts(collectionOf(report, 'history'))).to.include({ written: 1 });
      expect(collectionOf(report, 'tokens')).to.include({ into: null, read: 1, written: 0 });
      expect(await snapshot(source)).to.equal(before);

      const server = await serveTarget(target.dbName);
      try {
        const get = async (path: string): Promise<unknown> => {
          const response = await fetch(`${server.url}${path}`);
          expect(response.status, path).to.equal(200);
          return response.json();
        };
        // 14:00 Berlin summer time is 12:00 UTC; the text value is a number now.
        const newest = (await get('/api/data/latestdata/Temperature?groupId=gh-1')) as unknown[];
        expect(newest).to.have.lengthOf(1);
        expect(newest[0]).to.include({
          group: 'gh-1',
          topic: 'esp/air/temperature',
          value: 24.1,
          time: '2024-05-01T12:05:00.000Z',
        });
        const temperatures = (await get('/api/data/All/temperature?groupId=gh-1')) as {
          value: number;
          time: string;
        }[];
        expect(temperatures.map((r) => [r.value, r.time])).to.deep.equal([
          [24.1, '2024-05-01T12:05:00.000Z'],
          [23.45, '2024-05-01T12:00:00.000Z'],
        ]);
        const latest = (await get('/api/data/latestdata/All?groupId=gh-1')) as {
          topic: string;
          value: number;
        }[];
        expect(latest.map((r) => [r.topic, r.value])).to.have.deep.members([
          ['esp/air/temperature', 24.1],
          ['esp/air/humidity', 61],
          ['esp/ground/moisture/1', 40.5],
        ]);
        const actions = (await get('/api/actions/current_state?group=gh-1')) as {
          message: { object: string; value: string; automations: unknown }[];
        };
        expect(actions.message.map((a) => [a.object, a.value])).to.deep.equal([
          ['led_1', 'off'],
          ['pump_1', 'on'],
        ]);
        expect(actions.message[1]?.automations).to.deep.equal([
          {
            timeAutomations: [{ action: 'on', time: '06:30', frequency: 'every day' }],
            sensorAutomations: [{ action: 'off', sensor: 'humidity', condition: 'above', value: '80' }],
          },
        ]);
        const group = (await get('/api/group/abo?group=gh-1')) as {
          employee: string[];
          settings: unknown;
          package: string;
        };
        expect(group.employee).to.deep.equal(['Ana Grower', 'Ben Hill']);
        expect(group.package).to.equal('medium');
        expect(group.settings).to.deep.equal([
          { tempMin: 15 },
          { tempMax: 30 },
          { emailNotification: true },
          { email: 'ana@example.org' },
        ]);
        const open = (await get('/api/notification/latestdata/notifications?groupId=gh-1')) as {
          message: string;
          ignore: string;
          value?: number;
        }[];
        expect(open.map((n) => [n.message, n.ignore, n.value])).to.have.deep.members([
          ['Temperature above 24', 'false', 24.1],
          ['Moisture low', 'false', 12],
        ]);
        // The user keeps its id, so the chart record and the id the web client holds stay valid.
        const charts = (await get(`/api/historyChart/all/${userId.toHexString()}`)) as {
          charts: { chartId: string; chartName: string; chartData: Record<string, unknown> }[];
        };
        expect(charts.charts.map((c) => [c.chartId, c.chartName])).to.deep.equal([
          ['c1', 'Climate'],
          ['defaultId', 'Bare'],
        ]);
        expect(charts.charts[0]?.chartData).to.deep.include({
          type: 'scatter',
          max_count: 500,
          data_interval: 60000,
        });
        expect(charts.charts[0]?.chartData['datasets']).to.deep.equal([
          {
            checked_temperature: true,
            checked_humidity: true,
            checked_lux: false,
            checked_moisture_1: false,
            checked_moisture_2: false,
            checked_moisture_3: false,
          },
        ]);
        const bare = (await get(`/api/historyChart/settings/${userId.toHexString()}/Bare`)) as Record<
          string,
          unknown
        >;
        expect(JSON.stringify(bare)).to.include('"max_count":100').and.include('"update_interval":15000');

        // The original's cost-10 hash logs in with the old password (the e-mail in any case); a wrong one does not.
        const logIn = (email: string, password: string): Promise<Response> =>
          fetch(`${server.url}/api/auth`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, password }),
          });
        const wrong = await logIn('ana@example.org', 'Not-the-old-1!');
        expect(wrong.status).to.equal(401);
        const loggedIn = await logIn('Ana@Example.org', OLD_PASSWORD);
        expect(loggedIn.status).to.equal(200);
        const session = (await loggedIn.json()) as { data: { token: string; userId: string; group: string } };
        expect(session.data).to.include({ userId: userId.toHexString(), group: 'gh-1' });
        const profile = await fetch(`${server.url}/api/apiuserdata/${userId.toHexString()}`, {
          headers: { authorization: `Bearer ${session.data.token}` },
        });
        expect(profile.status).to.equal(200);
        const person = (await profile.json()) as Record<string, unknown>;
        expect(person).to.include({ email: 'ana@example.org', firstName: 'Ana', group: 'gh-1' });
        expect(JSON.stringify(person)).to.not.include('$2');
      } finally {
        await server.close();
      }
      // The user kept its id; the log-in may have rehashed the cost-10 hash, which still matches the old password.
      const stored = await target.store.db.collection('users').findOne({ email: 'ana@example.org' });
      expect(stored?.['_id']).to.deep.equal(userId);
      expect(compareSync(OLD_PASSWORD, String(stored?.['password']))).to.equal(true);
      expect(await target.store.db.collection('tokens').countDocuments()).to.equal(0);
    },
  );

  withMongo(
    when('when the migration runs a second time, then nothing is added twice and the report says so'),
    async () => {
      await writeOriginal(source, hash);
      await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);
      const readingsAfterFirst = await target.store.db.collection('readings').countDocuments();

      const { stdout } = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);

      const report = JSON.parse(stdout) as MigrationReport;
      expect(counts(collectionOf(report, 'datas'))).to.deep.equal({
        read: 7,
        written: 0,
        alreadyThere: 4,
        merged: 0,
        duplicates: 1,
        rejected: 2,
      });
      for (const name of ['groups', 'users', 'devices', 'actions', 'notifications', 'alarms', 'history']) {
        expect(collectionOf(report, name).written, name).to.equal(0);
        expect(collectionOf(report, name).merged, name).to.equal(0);
      }
      expect(collectionOf(report, 'notifications').alreadyThere).to.equal(2);
      expect(collectionOf(report, 'history').alreadyThere).to.equal(1);
      const db = target.store.db;
      expect(await db.collection('readings').countDocuments()).to.equal(readingsAfterFirst);
      expect(await db.collection('notifications').countDocuments()).to.equal(3);
      expect(await db.collection('users').countDocuments()).to.equal(1);
      expect(await db.collection('actions').countDocuments()).to.equal(2);
      expect(await db.collection('devices').countDocuments()).to.equal(1);
      expect(await db.collection('groups').countDocuments()).to.equal(2);
    },
  );

  withMongo(
    when(
      'when a group of the same name is in Hortus already, then it is merged and the report says what changed',
    ),
    async () => {
      await writeOriginal(source, hash);
      const created = await hortus(target.container, ['group', 'create', 'gh-2', '--package', 'small']);
      expect(created.code, created.stderr).to.equal(0);

      const { stdout } = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);

      const groups = collectionOf(JSON.parse(stdout) as MigrationReport, 'groups');
      expect(counts(groups)).to.include({ written: 1, merged: 1 });
      expect(groups.notes.map((n) => n.text)).to.include.members([
        'added employees Cy Dee, Dee Ek',
        "package differs: kept Hortus's small (original: big)",
      ]);
      const shown = await hortus(target.container, ['group', 'show', 'gh-2', '--json']);
      expect((JSON.parse(shown.stdout) as { employee: string[] }).employee).to.deep.equal([
        'Cy Dee',
        'Dee Ek',
      ]);

      // A second run finds them listed and adds none again.
      await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);
      const again = await hortus(target.container, ['group', 'show', 'gh-2', '--json']);
      expect((JSON.parse(again.stdout) as { employee: string[] }).employee).to.deep.equal([
        'Cy Dee',
        'Dee Ek',
      ]);
    },
  );

  withMongo(
    when(
      'when a run is interrupted, then it stops after the batch in flight, and the next run resumes after its checkpoint',
    ),
    async () => {
      const readings = Array.from({ length: 95 }, (_, i) => ({
        _id: new ObjectId(),
        time: new Date(Date.UTC(2024, 4, 1, 0, i)),
        topic: 'esp/air/humidity',
        value: String(50 + (i % 10)),
        group: 'gh-1',
      }));
      await source.collection('datas').insertMany(readings);
      await source
        .collection('groups')
        .insertOne({ name: 'gh-1', package: 'small', employee: [], settings: [] });
      const signals = new EventEmitter();
      // Ctrl-C as soon as the readings start: the first batch of 10 finishes, then the run stops.
      const stderr = new (class extends Capture {
        override write(chunk: string): boolean {
          if (chunk.includes('"collection":"datas"')) signals.emit('SIGINT');
          return super.write(chunk);
        }
      })();

      const first = await hortus(
        target.container,
        ['migrate', '--from', sourceUri, '--batch-size', '10', '--json'],
        {
          signals,
          stderr,
        },
      );

      expect(first.code).to.equal(5);
      expect(first.stderr).to.include('run the command again to resume');
      const interrupted = JSON.parse(first.stdout) as MigrationReport;
      expect(interrupted).to.include({ complete: false, interrupted: true });
      expect(counts(collectionOf(interrupted, 'datas'))).to.include({ read: 10, written: 10 });
      expect(await target.store.db.collection('readings').countDocuments()).to.equal(10);
      expect(signals.listenerCount('SIGINT')).to.equal(0);

      const second = await hortus(target.container, [
        'migrate',
        '--from',
        sourceUri,
        '--batch-size',
        '10',
        '--json',
      ]);

      expect(second.code, second.stderr).to.equal(0);
      const resumed = collectionOf(JSON.parse(second.stdout) as MigrationReport, 'datas');
      expect(resumed.resumedAfter).to.equal(readings[9]?._id.toHexString());
      expect(counts(resumed)).to.include({ read: 85, written: 85, alreadyThere: 0 });
      expect(await target.store.db.collection('readings').countDocuments()).to.equal(95);

      // Finished: the checkpoint is cleared, so a third run reads everything and finds it stored.
      const third = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);
      expect(counts(collectionOf(JSON.parse(third.stdout) as MigrationReport, 'datas'))).to.include({
        read: 95,
        written: 0,
        alreadyThere: 95,
      });
    },
  );

  withMongo(
    when('when the source changed after an interruption, then the collection is read again from its start'),
    async () => {
      const readings = Array.from({ length: 30 }, (_, i) => ({
        _id: new ObjectId(),
        time: new Date(Date.UTC(2024, 4, 1, 0, i)),
        topic: 'esp/air/humidity',
        value: String(i),
        group: 'gh-1',
      }));
      await source.collection('datas').insertMany(readings);
      const signals = new EventEmitter();
      const stderr = new (class extends Capture {
        override write(chunk: string): boolean {
          if (chunk.includes('"collection":"datas"')) signals.emit('SIGINT');
          return super.write(chunk);
        }
      })();
      const first = await hortus(target.container, ['migrate', '--from', sourceUri, '--batch-size', '10'], {
        signals,
        stderr,
      });
      expect(first.code).to.equal(5);
      // Someone edits the old database before the second run: the checkpoint no longer fits.
      await source.collection('datas').deleteOne({ _id: readings[0]?._id ?? new ObjectId() });

      const second = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);

      const datas = collectionOf(JSON.parse(second.stdout) as MigrationReport, 'datas');
      expect(datas.resumedAfter).to.equal(undefined);
      // The deleted reading was in the first batch: 9 of that batch are found, the other 20 are new.
      expect(counts(datas)).to.include({ read: 29, written: 20, alreadyThere: 9 });
      expect(datas.notes[0]?.text).to.equal(
        'the source changed since the interrupted run: this collection was read from its start again',
      );
    },
  );

  withMongo(
    when(
      'when no MONGODB_URI is set, then it migrates into the SQLite file, a second run adds nothing, and the old password logs in',
    ),
    async () => {
      await writeOriginal(source, hash);
      const dataDir = await mkdtemp(join(tmpdir(), 'hortus-migrate-'));
      const env = { HORTUS_DATA_DIR: dataDir };
      try {
        const first = await hortus(
          undefined,
          ['migrate', '--from', sourceUri, '--time-zone', 'Europe/Berlin', '--json'],
          { env },
        );
        const second = await hortus(
          undefined,
          ['migrate', '--from', sourceUri, '--time-zone', 'Europe/Berlin', '--json'],
          { env },
        );
        const latest = await hortus(undefined, ['readings', 'latest', '--group', 'gh-1', '--json'], { env });

        expect(counts(collectionOf(JSON.parse(first.stdout) as MigrationReport, 'datas'))).to.include({
          written: 4,
          duplicates: 1,
          rejected: 2,
        });
        const again = JSON.parse(second.stdout) as MigrationReport;
        expect(
          again.collections.map((c) => [c.collection, c.written, c.merged]),
          JSON.stringify(again.collections.map((c) => [c.collection, c.notes])),
        ).to.deep.equal(again.collections.map((c) => [c.collection, 0, 0]));
        expect(counts(collectionOf(again, 'datas'))).to.include({ alreadyThere: 4 });
        const newest = JSON.parse(latest.stdout) as { topic: string; value: number; time: string }[];
        expect(newest.find((r) => r.topic === 'esp/air/temperature')).to.include({
          value: 24.1,
          time: '2024-05-01T12:05:00.000Z',
        });

        // The hash landed in the SQLite store's credentials: the old password logs in there too.
        const server = await startServer(
          loadConfig({ HORTUS_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUTOMATIONS: 'off' }),
          { logger: { info: () => undefined, warn: () => undefined, error: () => undefined } },
        );
        try {
          const loggedIn = await fetch(`${server.url}/api/auth`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: 'ana@example.org', password: OLD_PASSWORD }),
          });
          expect(loggedIn.status).to.equal(200);
          expect(((await loggedIn.json()) as { data: { userId: string } }).data.userId).to.equal(
            userId.toHexString(),
          );
        } finally {
          await server.close();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  withMongo(
    when('when --dry-run is given, then everything is read and checked and nothing is written'),
    async () => {
      await writeOriginal(source, hash);
      const emptyTarget = target.store.db;

      const { code, stdout } = await hortus(undefined, [
        'migrate',
        '--from',
        sourceUri,
        '--dry-run',
        '--json',
      ]);

      const report = JSON.parse(stdout) as MigrationReport;
      expect(code).to.equal(2);
      expect(report.dryRun).to.equal(true);
      expect(counts(collectionOf(report, 'datas'))).to.include({
        read: 7,
        written: 4,
        duplicates: 1,
        rejected: 2,
      });
      for (const name of ['readings', 'users', 'groups', 'notifications', 'historycharts']) {
        expect(await emptyTarget.collection(name).countDocuments(), name).to.equal(0);
      }
    },
  );

  withMongo(
    when('when the source holds none of the original collections, then it exits 2 naming them'),
    async () => {
      await source.collection('something_else').insertOne({ a: 1 });

      const { code, stderr } = await hortus(target.container, ['migrate', '--from', sourceUri]);

      expect(code).to.equal(2);
      expect(stderr)
        .to.include('none of the original')
        .and.include(
          'looked for: groups, users, devices, actions, datas, notifications, alarms, history, tokens',
        );
    },
  );

  withMongo(
    when('when the source is the database Hortus uses, then it refuses before writing anything'),
    async () => {
      await writeOriginal(source, hash);

      const { code, stderr } = await hortus(undefined, ['migrate', '--from', sourceUri], {
        env: { MONGODB_URI: sourceUri },
      });

      expect(code).to.equal(2);
      expect(stderr).to.include('the original must stay untouched');
    },
  );
});

describe('hortus migrate: bad input without any database', () => {
  it('when the source cannot be reached, then it exits 5 with a clear message', async () => {
    const { code, stderr } = await hortus(undefined, [
      'migrate',
      '--from',
      'mongodb://127.0.0.1:9/original?serverSelectionTimeoutMS=200',
    ]);

    expect(code).to.equal(5);
    expect(stderr).to.include('cannot reach the source database at mongodb://127.0.0.1:9/original');
  });

  it('when --from is not a MongoDB URI or the time zone is unknown, then it exits 2', async () => {
    const notUri = await hortus(undefined, ['migrate', '--from', 'postgres://x/y']);
    const badZone = await hortus(undefined, [
      'migrate',
      '--from',
      'mongodb://127.0.0.1:9/x',
      '--time-zone',
      'Mars/Olympus',
    ]);

    expect(notUri.code).to.equal(2);
    expect(notUri.stderr).to.include('--from must be a MongoDB URI');
    expect(badZone.code).to.equal(2);
    expect(badZone.stderr).to.include('--time-zone must be an IANA time zone');
  });
});

async function serveTarget(dbName: string): Promise<RunningServer> {
  const config = loadConfig({
    MONGODB_URI: uri,
    MONGODB_DB: dbName,
    PORT: '0',
    HOST: '127.0.0.1',
    AUTOMATIONS: 'off',
  });
  return startServer(config, {
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
}
