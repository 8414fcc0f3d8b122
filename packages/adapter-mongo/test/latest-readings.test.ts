import { expect } from 'chai';
import { ObjectId } from 'mongodb';
import { MongoReadingRepository } from '@hortus/adapter-mongo';
import { serverSuite, useTestDatabase } from './fixture.js';

const GROUP = 'greenhouse-a';

describe(serverSuite('Mongo latest records'), () => {
  const database = useTestDatabase();
  beforeEach(async () => database().clear());

  const stored = (topic: string, value: number, minutes: number) => ({
    _id: new ObjectId(),
    group: GROUP,
    topic,
    value,
    time: new Date(Date.UTC(2026, 0, 1, 0, minutes)),
  });

  it('when readings reached the database around Hortus, then the first read builds the record from them and later reads use it', async () => {
    const { db } = database().store;
    await db
      .collection('readings')
      .insertMany([stored('air', 1, 0), stored('air', 2, 5), stored('soil', 30, 1)]);

    // A server starting on that database (each server asks once whether its records were complete from the start).
    const readings = new MongoReadingRepository(database().store.database);
    const first = await readings.latestOfEveryTopic(GROUP);

    expect(first.map((reading) => [reading.topic, reading.value])).to.deep.equal([
      ['air', 2],
      ['soil', 30],
    ]);
    const records = await db.collection('latestreadings').find({ group: GROUP }).toArray();
    expect(records.map((record) => [record['complete'], record['topics'].length])).to.deep.equal([[true, 2]]);
    // Written around Hortus again: the record, already checked, answers without looking at the readings.
    await db.collection('readings').insertOne(stored('air', 3, 9));
    expect(await readings.latest(GROUP, 'air')).to.include({ value: 2 });
  });

  it('when Hortus adds readings to a group whose older readings it never saw, then the record holds both', async () => {
    const { db } = database().store;
    await db.collection('readings').insertOne(stored('soil', 30, 1));
    const readings = new MongoReadingRepository(database().store.database);

    await readings.add([
      { group: GROUP, topic: 'air', value: 7, time: new Date(Date.UTC(2026, 0, 1, 0, 3)) },
    ]);

    const latest = await readings.latestOfEveryTopic(GROUP);
    expect(latest.map((reading) => [reading.topic, reading.value])).to.deep.equal([
      ['air', 7],
      ['soil', 30],
    ]);
  });

  it('when the records are dropped and the server restarts (after a restore), then each group is built again at its next read', async () => {
    const readings = new MongoReadingRepository(database().store.database);
    await readings.add([{ group: GROUP, topic: 'air', value: 7, time: new Date(Date.UTC(2026, 0, 1)) }]);
    expect(await readings.latest(GROUP, 'air')).to.include({ value: 7 });

    await database().store.db.collection('latestreadings').deleteMany({});
    const restarted = new MongoReadingRepository(database().store.database);

    expect(await restarted.latest(GROUP, 'air')).to.include({ value: 7 });
    expect(await restarted.knownTopics(GROUP, ['air', 'soil'])).to.deep.equal(['air']);
  });

  it('when the database held no readings at first use, then groups without readings answer empty without a look at the readings', async () => {
    const fresh = new MongoReadingRepository(database().store.database);
    await fresh.add([{ group: GROUP, topic: 'air', value: 7, time: new Date(Date.UTC(2026, 0, 1)) }]);
    // Written around Hortus after the start: a fresh database's records are trusted, so it stays unseen.
    await database()
      .store.db.collection('readings')
      .insertOne({ ...stored('air', 1, 0), group: 'elsewhere' });

    expect(await fresh.latestOfEveryTopic('elsewhere')).to.deep.equal([]);
    expect(await fresh.countTopics(GROUP)).to.equal(1);
    expect(await fresh.latest(GROUP, 'air')).to.include({ value: 7 });
  });
});
