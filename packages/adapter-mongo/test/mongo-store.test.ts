import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Container } from 'inversify';
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
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
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
  mongoStoreModule,
  MongoUserRepository,
} from '@hortus/adapter-mongo';
import { rejectionOf, serverSuite, useTestDatabase } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

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
      [
        'actionhistory',
        {
          group_at: { key: { group: 1, at: -1, _id: -1 }, unique: false },
          group_object_at: { key: { group: 1, object: 1, at: -1, _id: -1 }, unique: false },
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
      ['groupstages', { group_version_unique: { key: { group: 1, version: -1 }, unique: true } }],
      [
        'auditlog',
        {
          at_id: { key: { at: -1, _id: -1 }, unique: false },
          group_at_id: { key: { group: 1, at: -1, _id: -1 }, unique: false },
        },
      ],
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
        'attempts',
        {
          key_unique: { key: { key: 1 }, unique: true },
          expire: { key: { expire: 1 }, unique: false },
        },
      ],
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
