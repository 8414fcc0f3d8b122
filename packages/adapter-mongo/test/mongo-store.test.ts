import 'reflect-metadata';
import { type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Container } from 'inversify';
import { type Context } from 'mocha';
import {
  Binary,
  type BulkWriteResult,
  MongoBulkWriteError,
  MongoNetworkError,
  MongoOperationTimeoutError,
  MongoServerError,
  ObjectId,
} from 'mongodb';
import {
  ACTION_REPOSITORY,
  applyChartChange,
  AUTOMATION_LOG_REPOSITORY,
  type Chart,
  ConflictError,
  DEVICE_REPOSITORY,
  ENGINE_STATE_REPOSITORY,
  GROUP_REPOSITORY,
  type GroupRepository,
  HISTORY_CHART_REPOSITORY,
  InvalidInputError,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
  StoreUnavailableError,
  USER_REPOSITORY,
} from '@hortus/core';
import {
  collections,
  MongoActionRepository,
  MongoAutomationLogRepository,
  MongoDeviceRepository,
  MongoEngineStateRepository,
  MongoGroupRepository,
  MongoHistoryChartRepository,
  MongoNotificationRepository,
  MongoReadingRepository,
  mongoSettingsFromEnv,
  MongoStore,
  mongoStoreModule,
  MongoUserRepository,
  parseWriteConcern,
  toDomainError,
  withDeadline,
} from '@hortus/adapter-mongo';
import { ferretDbBinary, freePort, killProcess, startFerretDb } from '@hortus/contract-tests';
import { serverSuite, useTestDatabase } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

/** Rejects with whatever `promise` rejects with, and reports how long that took. */
async function rejectionOf(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('expected a rejection');
}

describe('Mongo store configuration', () => {
  it('when no write concern is configured, then writes wait for a majority', async () => {
    const store = MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/' });
    expect(store.db.writeConcern?.w).to.equal('majority');
    await store.close();
  });

  it('when a write concern is configured, or only given in the URI, then it applies', async () => {
    const configured = MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/?w=majority', writeConcern: 1 });
    const fromUri = MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/?w=1' });
    expect(configured.db.writeConcern?.w).to.equal(1);
    expect(fromUri.db.writeConcern?.w).to.equal(1);
    await Promise.all([configured.close(), fromUri.close()]);
  });

  it('when nothing else is said, then server selection gives up after 2 s; the URI or the settings can change it', async () => {
    const stores = [
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/' }),
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=7000' }),
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/', serverSelectionTimeoutMS: 300 }),
    ];
    expect(stores.map((store) => store.client.options.serverSelectionTimeoutMS)).to.deep.equal([
      2000, 7000, 300,
    ]);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('when MONGODB_TIMEOUT_MS is set or not, then operations get that deadline or 2 s, and the driver gives up on a silent socket a second later', async () => {
    expect(mongoSettingsFromEnv({ MONGODB_URI: 'mongodb://db/', MONGODB_TIMEOUT_MS: '500' })).to.deep.include(
      {
        operationTimeoutMS: 500,
      },
    );
    expect(() => mongoSettingsFromEnv({ MONGODB_URI: 'mongodb://db/', MONGODB_TIMEOUT_MS: 'soon' })).to.throw(
      /MONGODB_TIMEOUT_MS/u,
    );
    const stores = [
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/' }),
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/', operationTimeoutMS: 500 }),
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/?socketTimeoutMS=9000' }),
    ];
    expect(stores.map((store) => store.client.options.socketTimeoutMS)).to.deep.equal([3000, 1500, 9000]);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('when MONGODB_REVISION_POLL_MS is set, then it is the mirror interval (0 turns the mirror off), and anything else is invalid input', () => {
    expect(
      mongoSettingsFromEnv({ MONGODB_URI: 'mongodb://db/', MONGODB_REVISION_POLL_MS: '100' }),
    ).to.deep.include({
      revisionPollMS: 100,
    });
    expect(
      mongoSettingsFromEnv({ MONGODB_URI: 'mongodb://db/', MONGODB_REVISION_POLL_MS: '0' }),
    ).to.deep.include({
      revisionPollMS: 0,
    });
    for (const bad of ['soon', '-1', '1.5', '60001']) {
      expect(
        () => mongoSettingsFromEnv({ MONGODB_URI: 'mongodb://db/', MONGODB_REVISION_POLL_MS: bad }),
        bad,
      ).to.throw(InvalidInputError);
    }
  });

  it('when the database is named by MONGODB_DB, in the URI path or nowhere, then that name or "hortus" is used', async () => {
    const stores = [
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/fromuri?w=1', dbName: 'explicit' }),
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/fromuri?w=1' }),
      MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/?w=1' }),
    ];
    expect(stores.map((store) => store.db.databaseName)).to.deep.equal(['explicit', 'fromuri', 'hortus']);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('when the environment names the store, then the settings are read from MONGODB_URI, MONGODB_DB and MONGODB_WRITE_CONCERN', () => {
    expect(mongoSettingsFromEnv({})).to.equal(undefined);
    expect(mongoSettingsFromEnv({ MONGODB_URI: '  ' })).to.equal(undefined);
    expect(
      mongoSettingsFromEnv({ MONGODB_URI: 'mongodb://db/', MONGODB_DB: 'prod', MONGODB_WRITE_CONCERN: '2' }),
    ).to.deep.equal({ uri: 'mongodb://db/', dbName: 'prod', writeConcern: 2 });
  });

  it('when the write concern is not "majority" or a number, then it is invalid input', () => {
    expect(parseWriteConcern('majority')).to.equal('majority');
    expect(parseWriteConcern('0')).to.equal(0);
    for (const bad of ['most', '-1', '1.5', 'majority;drop']) {
      expect(() => parseWriteConcern(bad), bad).to.throw(InvalidInputError);
    }
  });
});

describe('Mongo driver error translation', () => {
  it('when the server reports a duplicate key (11000), then it becomes a ConflictError of the resource', () => {
    const translated = toDomainError(
      new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 }),
      'group',
      'A group with that name exists',
    );

    expect(translated).to.be.an.instanceOf(ConflictError);
    expect(translated).to.include({
      code: 'CONFLICT',
      resource: 'group',
      message: 'A group with that name exists',
    });
  });

  it('when a bulk insert could not reach the server, then it becomes a StoreUnavailableError (a 503, not a 500)', () => {
    // What insertMany throws when the connection is refused or drops: the network error wrapped in a bulk error.
    const bulk = new MongoBulkWriteError(
      new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017'),
      {} as BulkWriteResult,
    );

    expect(toDomainError(bulk, 'reading', 'conflict')).to.be.an.instanceOf(StoreUnavailableError);
  });

  it('when FerretDB on SQLite reports its database locked by other writers, then it is StoreUnavailableError', () => {
    const busy = new MongoServerError({
      message:
        '[collection.go:177 sqlite.(*collection).UpdateAll.func1] database is locked (5) (SQLITE_BUSY)',
      code: 1,
    });

    expect(toDomainError(busy, 'reading', 'conflict')).to.be.an.instanceOf(StoreUnavailableError);
  });

  it("when the driver's client-side operation timeout fires, then it is StoreUnavailableError", () => {
    expect(
      toDomainError(new MongoOperationTimeoutError('timed out'), 'reading', 'conflict'),
    ).to.be.an.instanceOf(StoreUnavailableError);
  });

  it('when an operation outlasts its deadline, then StoreUnavailableError at the deadline; one within it answers', async () => {
    const never = new Promise<never>(() => undefined);
    const { error, ms } = await rejectionOf(withDeadline(never, 150));
    expect(error).to.be.an.instanceOf(StoreUnavailableError);
    expect((error as Error).cause)
      .to.have.property('message')
      .that.matches(/within 150 ms/u);
    // Not early; and at this deadline, not at a later one (the driver's own 30 s), even on a loaded machine.
    expect(ms).to.be.within(140, 5000);
    expect(await withDeadline(Promise.resolve('answer'), 150)).to.equal('answer');
    const failure = new Error('duplicate');
    await expect(withDeadline(Promise.reject(failure), 150)).to.be.rejectedWith(failure);
  });

  it('when any other server error occurs, then it passes through unchanged', () => {
    const original = new MongoServerError({ message: 'bad value', code: 2 });

    expect(toDomainError(original, 'group', 'conflict')).to.equal(original);
  });
});

describe('Mongo store when no server answers', () => {
  let store: MongoStore;

  beforeEach(() => {
    // Port 1 is closed on any test machine: connections are refused at once.
    store = MongoStore.fromSettings({ uri: 'mongodb://127.0.0.1:1/', serverSelectionTimeoutMS: 500 });
  });

  afterEach(async () => {
    await store.close();
  });

  it('when a repository is used, then it rejects with StoreUnavailableError within 2 s instead of hanging', async () => {
    const { readings, groups, users, historyCharts } = store.repositories();
    const attempts = [
      readings.add([{ group: 'g', topic: 't', value: 1, time: new Date() }]),
      readings.latestOfEveryTopic('g'),
      groups.findByName('g'),
      users.changeEmail(new ObjectId().toHexString(), 'a@b.example'),
      historyCharts.updateChart('u', 'a', { kind: 'set-field', field: 'type', value: 'line' }, new Date()),
    ];

    for (const { error, ms } of await Promise.all(attempts.map(rejectionOf))) {
      expect(error).to.be.an.instanceOf(StoreUnavailableError);
      expect(error).to.have.property('code', 'UNAVAILABLE');
      expect(ms).to.be.below(2000);
    }
  });

  it('when the store starts, then it rejects with StoreUnavailableError and a later start tries again', async () => {
    const first = await rejectionOf(store.start());
    const second = await rejectionOf(store.start());

    expect(first.error).to.be.an.instanceOf(StoreUnavailableError);
    expect(second.error).to.be.an.instanceOf(StoreUnavailableError);
    // A real second attempt waits for selection again rather than failing on a closed client at once.
    expect(second.ms).to.be.at.least(400);
  });

  it('when health is asked, then ping answers false', async () => {
    expect(await store.ping()).to.equal(false);
  });
});

describe(serverSuite('Mongo store on a server'), () => {
  const database = useTestDatabase();

  beforeEach(async () => {
    await database().clear();
  });

  it('when it starts, then every collection has the indexes its queries need, unique where identity demands', async () => {
    const expected = new Map([
      ['readings', { group_topic_time_unique: { key: { group: 1, topic: 1, time: -1 }, unique: true } }],
      ['actions', { group_object_unique: { key: { group: 1, object: 1 }, unique: true } }],
      [
        'devices',
        {
          deviceId_unique: { key: { deviceId: 1 }, unique: true },
          group_deviceId: { key: { group: 1, deviceId: 1 }, unique: false },
          keyHash: { key: { keyHash: 1 }, unique: false },
          previousKeyHash: { key: { previousKeyHash: 1 }, unique: false },
        },
      ],
      ['pendingdevices', { lastSeenAt: { key: { lastSeenAt: -1 }, unique: false } }],
      ['firmwareimages', { sha256: { key: { sha256: 1 }, unique: false } }],
      [
        'notifications',
        {
          group_ignore_id: { key: { group: 1, ignore: 1, _id: -1 }, unique: false },
          group_time: { key: { group: 1, time: 1 }, unique: false },
        },
      ],
      ['historycharts', { userId_unique: { key: { userId: 1 }, unique: true } }],
      [
        'historychartrevisions',
        {
          chart_v_unique: { key: { chart: 1, v: 1 }, unique: true },
          userId_position_chart_v: { key: { userId: 1, position: 1, chart: 1, v: 1 }, unique: false },
        },
      ],
      ['groups', { name_unique: { key: { name: 1 }, unique: true } }],
      ['latestreadings', { group_v_unique: { key: { group: 1, v: 1 }, unique: true } }],
      ['groupemployees', { group_id: { key: { group: 1, _id: 1 }, unique: false } }],
      [
        'users',
        {
          email_unique: { key: { email: 1 }, unique: true },
          emailKey_unique: { key: { emailKey: 1 }, unique: true },
        },
      ],
      [
        'enginestate',
        {
          key_version_unique: { key: { key: 1, version: -1 }, unique: true },
          updatedAt: { key: { updatedAt: 1 }, unique: false },
        },
      ],
      ['automationevents', { group_id: { key: { group: 1, _id: -1 }, unique: false } }],
      [
        'accesskeys',
        {
          secretHash_unique: { key: { secretHash: 1 }, unique: true },
          createdAt_id: { key: { createdAt: 1, _id: 1 }, unique: false },
        },
      ],
      // Read and written by `_id` only; they come into being with their first write.
      ['revisions', {}],
      ['schemaversions', {}],
      ['serversecrets', {}],
      ['usedinvitations', {}],
      ['usedresettokens', {}],
      ['notifysettings', {}],
      [
        'outbox',
        {
          status_due: { key: { status: 1, nextAttemptAt: 1, _id: 1 }, unique: false },
          group_id: { key: { group: 1, _id: -1 }, unique: false },
        },
      ],
      ['outboxclaims', { message: { key: { message: 1 }, unique: false } }],
      [
        'readingrollups_1h',
        { chunk_v_unique: { key: { group: 1, topic: 1, start: 1, v: 1 }, unique: true } },
      ],
      [
        'readingrollups_1m',
        { chunk_v_unique: { key: { group: 1, topic: 1, start: 1, v: 1 }, unique: true } },
      ],
    ]);
    expect(collections.map((c) => c.name).sort()).to.deep.equal([...expected.keys()].sort());

    for (const [collection, indexes] of expected) {
      if (Object.keys(indexes).length === 0) continue;
      const found = await database().store.db.collection(collection).listIndexes().toArray();
      const byName = Object.fromEntries(
        found
          .filter((index) => index['name'] !== '_id_')
          .map((index) => [index['name'], { key: { ...index['key'] }, unique: index['unique'] === true }]),
      );
      expect(byName, collection).to.deep.equal(indexes);
    }
  });

  it('when the indexes are ensured again, then nothing changes and nothing fails', async () => {
    await database().store.ensureIndexes();
    await database().store.start();

    const readingsIndexes = await database().store.db.collection('readings').listIndexes().toArray();
    expect(readingsIndexes).to.have.lengthOf(2);
  });

  it('when a unique key is violated, then the ConflictError carries the stable code and the resource', async () => {
    const { devices } = database().repositories;
    await devices.create({ deviceId: 'AA:BB', group: 'g', type: 'box' });

    const { error } = await rejectionOf(devices.create({ deviceId: 'AA:BB', group: 'g', type: 'box' }));

    expect(error).to.be.an.instanceOf(ConflictError);
    expect(error).to.include({ code: 'CONFLICT', resource: 'device' });
  });

  it('when an id is 12 characters (which ObjectId.isValid accepts) or otherwise not 24 hex digits, then the user is not found', async () => {
    const { users } = database().repositories;
    const created = await users.create({ firstName: 'A', lastName: 'B', email: 'a@b.example', group: 'g' });

    for (const id of [
      'aaaaaaaaaaaa',
      `${created.id}0`,
      created.id.slice(1),
      { toString: () => created.id },
    ]) {
      expect(await users.findById(id as string), String(id)).to.equal(undefined);
      expect(await users.changeEmail(id as string, 'c@d.example'), String(id)).to.equal(undefined);
    }
    expect(await users.findById(created.id.toUpperCase())).to.deep.equal(created);
  });

  it('when free-form JSON has keys MongoDB refuses or reads as paths, then it is stored and handed back unchanged', async () => {
    const { groups, historyCharts } = database().repositories;
    const awkward = {
      'a.b': 1,
      $where: 'x',
      '%2E': '%',
      'nul\u0000key': [{ 'x.y': { $gt: 1 } }],
      '': 'empty',
    };
    const chart: Chart = {
      chartId: 'c',
      chartName: 'awkward',
      chartData: { ...awkward, type: 'line' },
      createdAt: new Date(0),
      updatedAt: new Date(0),
    };

    await groups.create({ name: 'g', package: 'small', employee: [], settings: awkward });
    await historyCharts.appendChart('user', chart);
    await historyCharts.updateChart(
      'user',
      'awkward',
      { kind: 'set-field', field: 'type', value: 'scatter' },
      new Date(1),
    );

    expect((await groups.findByName('g'))?.settings).to.deep.equal(awkward);
    expect((await historyCharts.findByUser('user'))?.charts[0]?.chartData).to.deep.equal({
      ...awkward,
      type: 'scatter',
    });
  });

  it('when a dataset flag is set, then every shape of datasets ends as the core rule says', async () => {
    const { historyCharts } = database().repositories;
    const shapes: unknown[] = [
      undefined,
      [],
      'legacy text',
      [7, { second: true }],
      [{ checked_lux: false }],
      { a: 1 },
    ];
    const now = new Date(60_000);

    for (const [i, datasets] of shapes.entries()) {
      const chart: Chart = {
        chartId: `c${i}`,
        chartName: `chart ${i}`,
        chartData: datasets === undefined ? { type: 'line' } : { type: 'line', datasets },
        createdAt: new Date(0),
        updatedAt: new Date(0),
      };
      await historyCharts.appendChart('user', chart);
      const change = { kind: 'set-dataset-flag', flag: 'checked_lux', checked: true } as const;

      const updated = await historyCharts.updateChart('user', `chart ${i}`, change, now);

      expect(updated?.charts[i], JSON.stringify(datasets)).to.deep.equal(
        applyChartChange(chart, change, now),
      );
    }
  });

  it('when history charts are in the older one-record-per-user shape, then the start moves them out once and every route keeps working', async () => {
    const { store, repositories } = database();
    const old = (chartName: string, chartData: Record<string, unknown>): Record<string, unknown> => ({
      chartId: `id-${chartName}`,
      chartName,
      chartData,
      createdAt: new Date(1000),
      updatedAt: new Date(2000),
    });
    const { insertedId } = await store.db.collection('historycharts').insertOne({
      userId: 'old-user',
      // Keys as the older layout stored them: percent-escaped where MongoDB would refuse them.
      charts: [
        old('b', { type: 'line', '%2Ex': 1 }),
        old('a', { datasets: [{ checked_lux: true }] }),
        old('c', {}),
      ],
    });
    await store.db.collection('historycharts').insertOne({ userId: 'empty-user', charts: [] });

    await store.ensureIndexes();
    await store.ensureIndexes();

    const record = await repositories.historyCharts.findByUser('old-user');
    expect(record?.id).to.equal(insertedId.toHexString());
    expect(record?.charts.map((chart) => [chart.chartName, chart.chartData])).to.deep.equal([
      ['b', { type: 'line', '.x': 1 }],
      ['a', { datasets: [{ checked_lux: true }] }],
      ['c', {}],
    ]);
    expect(record?.charts[0]?.createdAt.getTime()).to.equal(1000);
    expect(record?.charts[0]?.updatedAt.getTime()).to.equal(2000);
    expect((await repositories.historyCharts.findByUser('empty-user'))?.charts).to.deep.equal([]);
    expect(await store.db.collection('historycharts').countDocuments({ charts: { $exists: true } })).to.equal(
      0,
    );

    await repositories.historyCharts.appendChart('old-user', {
      chartId: 'new',
      chartName: 'd',
      chartData: {},
      createdAt: new Date(3000),
      updatedAt: new Date(3000),
    });
    const change = { kind: 'set-dataset-flag', flag: 'checked_humidity', checked: true } as const;
    await repositories.historyCharts.updateChart('old-user', 'a', change, new Date(4000));
    const after = await repositories.historyCharts.removeCharts('old-user', 'c');
    expect(after?.charts.map((chart) => chart.chartName)).to.deep.equal(['b', 'a', 'd']);
    expect(after?.charts[1]?.chartData).to.deep.equal({
      datasets: [{ checked_lux: true, checked_humidity: true }],
    });
  });

  it('when rollups are in the older one-document-per-chunk shape, then a new reading adds to them and they count once', async () => {
    const { store, repositories } = database();
    const cells = (count: number): Binary => {
      const bytes = new Uint8Array(count * 32);
      const view = new DataView(bytes.buffer);
      // The first minute (and hour) held two readings, 4 and 6.
      [2, 10, 4, 6].forEach((number, index) => view.setFloat64(index * 8, number, true));
      return new Binary(bytes);
    };
    const chunk = `${JSON.stringify(['g', 't'])}${String(8.64e15).padStart(17, '0')}`;
    await store.db
      .collection<{ _id: string; [field: string]: unknown }>('readingrollups_1h')
      .insertOne({ _id: chunk, group: 'g', topic: 't', start: new Date(0), cells: cells(240), v: 3 });
    await store.db
      .collection<{ _id: string; [field: string]: unknown }>('readingrollups_1m')
      .insertOne({ _id: chunk, group: 'g', topic: 't', start: new Date(0), cells: cells(360), v: 5 });

    await repositories.readings.add([{ group: 'g', topic: 't', value: 8, time: new Date(30_000) }]);

    const range = { group: 'g', topic: 't', startDate: new Date(0), endDate: new Date(2 * 3_600_000) };
    for (const bucket of [60_000, 3_600_000]) {
      const buckets = await repositories.readings.aggregate(range, bucket);
      expect(
        buckets.map((b) => [b.time.getTime(), b.min, b.max, b.avg, b.count]),
        String(bucket),
      ).to.deep.equal([[0, 4, 8, 6, 3]]);
    }
    for (const collection of ['readingrollups_1h', 'readingrollups_1m']) {
      const stored = await store.db.collection(collection).find().toArray();
      expect(
        stored.map((document) => document['v']),
        collection,
      ).to.have.lengthOf(1);
    }
  });

  it('when older records hold a numeric text value or a password hash, then the entities carry a number and no hash', async () => {
    const { store, repositories } = database();
    await store.db
      .collection('readings')
      .insertOne({ group: 'g', topic: 't', value: '23.45', time: new Date(0) });
    const { insertedId } = await store.db.collection('users').insertOne({
      firstName: 'A',
      lastName: 'B',
      email: 'old@b.example',
      group: 'g',
      password: '$2b$10$hash',
    });

    // A server starting on that older database (its latest records are checked against the readings once).
    expect((await new MongoReadingRepository(store.database).latest('g', 't'))?.value).to.equal(23.45);
    const user = await repositories.users.findById(insertedId.toHexString());
    const changed = await repositories.users.changeEmail(insertedId.toHexString(), 'new@b.example');
    expect(Object.keys(user ?? {}).sort()).to.deep.equal(['email', 'firstName', 'group', 'id', 'lastName']);
    expect(Object.keys(changed ?? {}).sort()).to.deep.equal([
      'email',
      'firstName',
      'group',
      'id',
      'lastName',
    ]);
  });

  it('when a group of the original service keeps employees as text, then added ones follow them and the group document is left as it was', async () => {
    const { store, repositories } = database();
    await store.db
      .collection('groups')
      .insertOne({ name: 'old', package: 'small', employee: 'ana, ben', settings: [] });

    await repositories.groups.addEmployee('old', 'EveGrower');
    await repositories.groups.addEmployee('old', 'Finn');

    expect((await repositories.groups.findByName('old'))?.employee).to.deep.equal([
      'ana',
      'ben',
      'EveGrower',
      'Finn',
    ]);
    expect((await repositories.groups.list()).find((group) => group.name === 'old')?.employee).to.deep.equal([
      'ana',
      'ben',
      'EveGrower',
      'Finn',
    ]);
    expect((await store.db.collection('groups').findOne({ name: 'old' }))?.['employee']).to.equal('ana, ben');
  });

  it('when users of the original service (no emailKey, a cost-10 hash) are there at start, then they are found by e-mail in any case with their hash', async () => {
    const { store, repositories } = database();
    const { insertedId } = await store.db.collection('users').insertOne({
      firstName: 'Old',
      lastName: 'Timer',
      email: 'Old.Timer@B.example',
      group: 'g',
      password: '$2a$10$WvvTPHKwdBJ3uk0Z37EMR.hLA2W6N9AEBhEgrAOljy2Ae5MtaSIUi',
    });

    await store.ensureIndexes();

    const found = await repositories.users.findByEmail('old.timer@b.example');
    expect(found?.id).to.equal(insertedId.toHexString());
    expect(await repositories.users.findCredentials(insertedId.toHexString())).to.deep.equal({
      passwordHash: '$2a$10$WvvTPHKwdBJ3uk0Z37EMR.hLA2W6N9AEBhEgrAOljy2Ae5MtaSIUi',
      sessionVersion: 0,
    });
    await expect(
      repositories.users.create({ firstName: 'N', lastName: 'U', email: 'OLD.TIMER@b.example', group: 'g' }),
    ).to.be.rejectedWith(ConflictError);
  });

  it('when the container module is loaded, then every repository port resolves to its Mongo class on one database', async () => {
    const { store } = database();
    const container = new Container();
    container.load(mongoStoreModule(store.client, { dbName: store.db.databaseName }));

    const bound = [
      [READING_REPOSITORY, MongoReadingRepository],
      [ACTION_REPOSITORY, MongoActionRepository],
      [DEVICE_REPOSITORY, MongoDeviceRepository],
      [NOTIFICATION_REPOSITORY, MongoNotificationRepository],
      [HISTORY_CHART_REPOSITORY, MongoHistoryChartRepository],
      [GROUP_REPOSITORY, MongoGroupRepository],
      [USER_REPOSITORY, MongoUserRepository],
      [ENGINE_STATE_REPOSITORY, MongoEngineStateRepository],
      [AUTOMATION_LOG_REPOSITORY, MongoAutomationLogRepository],
    ] as const;
    for (const [token, type] of bound) {
      expect(container.get(token), String(token)).to.be.an.instanceOf(type);
      expect(container.get(token), 'one instance per container').to.equal(container.get(token));
    }
    await container.get<GroupRepository>(GROUP_REPOSITORY).create({
      name: 'via-container',
      package: 'big',
      employee: [],
      settings: [],
    });
    expect(await database().repositories.groups.findByName('via-container')).to.include({ package: 'big' });
  });

  it('when engine state keys are joined with NUL, as the engine builds them, then each key is its own entry', async () => {
    const { engineState } = database().repositories;
    const slot = 'slot\u0000gh\u0000pump_1\u000006:30';

    expect(await engineState.compareAndSet(slot, 0, { firedAt: 1 }, new Date(0))).to.equal(true);
    expect(await engineState.compareAndSet('slot\u0000gh', 0, { firedAt: 2 }, new Date(0))).to.equal(true);
    expect(await engineState.compareAndSet(slot, 0, { firedAt: 3 }, new Date(0))).to.equal(false);

    expect((await engineState.get(slot))?.value).to.deep.equal({ firedAt: 1 });
    expect((await engineState.get('slot\u0000gh'))?.value).to.deep.equal({ firedAt: 2 });
    expect(await engineState.get('slot')).to.equal(undefined);
  });

  it('when a key is advanced and older versions are purged, then the newest version still answers and advances', async () => {
    const { engineState } = database().repositories;
    await engineState.compareAndSet('rule', 0, { side: 'within' }, new Date(0));
    await engineState.compareAndSet('rule', 1, { side: 'beyond' }, new Date(10_000));

    await engineState.purgeBefore(new Date(5_000));

    expect(await engineState.get('rule')).to.deep.include({ version: 2, value: { side: 'beyond' } });
    expect(await engineState.compareAndSet('rule', 1, { side: 'within' }, new Date(20_000))).to.equal(false);
    expect(await engineState.compareAndSet('rule', 2, { side: 'within' }, new Date(20_000))).to.equal(true);
  });

  it('when health is asked, then ping answers true', async () => {
    expect(await database().store.ping()).to.equal(true);
  });
});

describe('Mongo store when its server dies and comes back', () => {
  const available = existsSync(ferretDbBinary);
  let port: number;
  let dir: string;
  let server: ChildProcess | undefined;
  let store: MongoStore | undefined;

  before(async function (this: Context) {
    if (!available) this.skip();
    port = await freePort();
    dir = await mkdtemp(join(tmpdir(), 'hortus-recovery-'));
  });

  after(async () => {
    await store?.close();
    if (server !== undefined) await killProcess(server);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(`when the server is killed and restarted on its port, then requests fail fast meanwhile and succeed again by themselves${
    available ? '' : ' (skipped: needs the FerretDB test binary, built by scripts/ferretdb.sh)'
  }`, async function (this: Context) {
    this.timeout(30_000);
    server = await startFerretDb(port, dir);
    store = MongoStore.fromSettings({
      uri: `mongodb://127.0.0.1:${port}/`,
      dbName: 'recovery',
      serverSelectionTimeoutMS: 1000,
    });
    await store.start();
    const { groups } = store.repositories();
    await groups.create({ name: 'kept', package: 'small', employee: [], settings: [] });

    await killProcess(server);
    const down = await rejectionOf(groups.findByName('kept'));
    expect(down.error).to.be.an.instanceOf(StoreUnavailableError);
    // Fast: the selection timeout (1 s), not the driver's default 30 s.
    expect(down.ms).to.be.below(10_000);
    expect(await store.ping()).to.equal(false);

    server = await startFerretDb(port, dir);
    const deadline = Date.now() + 10_000;
    let found: Awaited<ReturnType<typeof groups.findByName>>;
    for (;;) {
      try {
        found = await groups.findByName('kept');
        break;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || Date.now() > deadline) throw error;
      }
    }
    expect(found?.name).to.equal('kept');
    expect(await store.ping()).to.equal(true);
  });
});
