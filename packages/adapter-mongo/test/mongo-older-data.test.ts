import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { Binary } from 'mongodb';
import { ConflictError } from '@hortus/core';
import { MongoReadingRepository } from '@hortus/adapter-mongo';
import { serverSuite, useTestDatabase } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

describe(serverSuite('Mongo store on data of older layouts'), () => {
  const database = useTestDatabase();

  beforeEach(async () => {
    await database().clear();
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
    // No password; a record without a role is an operator, what the original's accounts could do (issue 36).
    const fields = ['email', 'firstName', 'group', 'id', 'lastName', 'role'];
    expect(Object.keys(user ?? {}).sort()).to.deep.equal(fields);
    expect(Object.keys(changed ?? {}).sort()).to.deep.equal(fields);
    expect(user?.role).to.equal('operator');
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
});
