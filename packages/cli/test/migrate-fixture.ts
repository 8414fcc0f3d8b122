import { randomBytes } from 'node:crypto';
import { hashSync } from 'bcryptjs';
import { MongoStore } from '@hortus/adapter-mongo';
import { createCoreModule, defaultCoreSettings } from '@hortus/core';
import { loadConfig, type MigrationReport, type RunningServer, startServer } from '@hortus/cli';
import { Container } from 'inversify';
import { BSON, type Db, type Document, MongoClient, ObjectId } from 'mongodb';

export const uri = process.env['MONGODB_URI']?.trim() ?? '';
const skipReason =
  ' [skipped: MONGODB_URI is unset; start the test server with eval "$(bash scripts/ferretdb.sh start)"]';
export const withMongo = uri === '' ? it.skip : it;
export const when = (title: string): string => `${title}${uri === '' ? skipReason : ''}`;

export const OLD_PASSWORD = 'Greenhouse-2019!';
export const oid = (n: number): ObjectId =>
  ObjectId.createFromHexString(`65a0000000000000000000${n.toString(16).padStart(2, '0')}`);
export const userId = oid(1);
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
export async function writeOriginal(db: Db, hash: string): Promise<void> {
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
export async function snapshot(db: Db): Promise<string> {
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

export interface Target {
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

export function collectionOf(report: MigrationReport, name: string): MigrationReport['collections'][number] {
  const found = report.collections.find((c) => c.collection === name);
  if (found === undefined) throw new Error(`no ${name} in the report`);
  return found;
}

export const counts = (c: MigrationReport['collections'][number]): Record<string, number> => ({
  read: c.read,
  written: c.written,
  alreadyThere: c.alreadyThere,
  merged: c.merged,
  duplicates: c.duplicates,
  rejected: c.rejected,
});

export async function serveTarget(dbName: string): Promise<RunningServer> {
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

/** A source database of the original's shape and a Hortus target on MongoDB, both new and dropped after. */
export interface MigrationPair {
  readonly client: MongoClient;
  readonly source: Db;
  readonly sourceUri: string;
  readonly target: Target;
}

async function openMigrationPair(): Promise<MigrationPair> {
  const client = new MongoClient(uri);
  await client.connect();
  const sourceName = uniqueName('original');
  const source = client.db(sourceName);
  const target = await openTarget(uniqueName('hortus_target'));
  return { client, source, sourceUri: dbUri(sourceName), target };
}

async function closeMigrationPair({ client, source, target }: MigrationPair): Promise<void> {
  for (const db of [source, target.store.db]) await db.dropDatabase();
  await target.store.close();
  await client.close();
}

/**
 * Registers, in the calling `describe`, hooks that open a new pair before each test (handed to `opened`) and
 * drop it after. Without MONGODB_URI nothing opens: the tests skip.
 */
export function eachMigrationPair(opened: (pair: MigrationPair) => void): void {
  let pair: MigrationPair | undefined;
  beforeEach(async function () {
    if (uri === '') return;
    pair = await openMigrationPair();
    opened(pair);
  });
  afterEach(async function () {
    const open = pair;
    pair = undefined;
    if (open !== undefined) await closeMigrationPair(open);
  });
}

/** A bcrypt hash as the original wrote it: cost 10. */
export function originalHash(): string {
  return hashSync(OLD_PASSWORD, 10);
}
