import { expect } from 'chai';
import { MONGO_SCHEMA_VERSION, mongoMigrations } from '@hortus/adapter-mongo';
import { serverSuite, useTestDatabase } from './fixture.js';

describe(serverSuite('Mongo migrations'), () => {
  const database = useTestDatabase();
  beforeEach(async () => database().clear());

  it('when the versions are listed, then they rise one by one from 1 and the schema version is the last', () => {
    expect(mongoMigrations.map(({ version }) => version)).to.deep.equal(
      Array.from({ length: mongoMigrations.length }, (_, index) => index + 1),
    );
    expect(MONGO_SCHEMA_VERSION).to.equal(mongoMigrations.length);
  });

  it('when the store starts on a database without versions, then every migration is applied and recorded once', async () => {
    const { store } = database();

    await store.ensureIndexes();
    await store.ensureIndexes();

    const recorded = await store.db.collection<{ _id: number }>('schemaversions').find({}).toArray();
    expect(recorded.map(({ _id }) => _id).sort()).to.deep.equal(
      mongoMigrations.map(({ version }) => version),
    );
  });

  it('when a migration is recorded as applied, then a later start does not run it again', async () => {
    const { store } = database();
    await store.ensureIndexes();
    // A record in the layout migration 2 moves, written after it ran: only a migration run would move it.
    await store.db.collection('historycharts').insertOne({ userId: 'late', charts: [] });

    await store.ensureIndexes();

    expect(await store.db.collection('historycharts').countDocuments({ charts: { $exists: true } })).to.equal(
      1,
    );
  });
});
