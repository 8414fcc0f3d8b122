import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError } from '@hortus/core';
import { MONGO_SCHEMA_VERSION, mongoMigrations } from '@hortus/adapter-mongo';
import { serverSuite, useTestDatabase } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

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

  it('when a newer Hortus has migrated the database, then start refuses it and changes nothing; schema() lists what was applied', async () => {
    const { store } = database();
    await store.ensureIndexes();
    const newer = MONGO_SCHEMA_VERSION + 1;
    await store.db.collection<{ _id: number; appliedAt: Date }>('schemaversions').insertOne({
      _id: newer,
      appliedAt: new Date('2027-01-01T00:00:00Z'),
    });
    await store.db.collection('historycharts').insertOne({ userId: 'late', charts: [] });

    const refused = await expect(store.ensureIndexes()).to.be.rejectedWith(InvalidInputError);
    expect(refused.message).to.match(
      /written by a newer Hortus \(migration \d+; this one knows up to \d+\)/u,
    );
    expect(await store.db.collection('historycharts').countDocuments({ charts: { $exists: true } })).to.equal(
      1,
    );
    const schema = await store.schema();
    expect(schema).to.include({ version: newer, known: MONGO_SCHEMA_VERSION });
    expect(schema.applied.map(({ version }) => version)).to.deep.equal([
      ...mongoMigrations.map(({ version }) => version),
      newer,
    ]);
  });
});
