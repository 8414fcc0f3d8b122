import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import {
  type BulkWriteResult,
  MongoBulkWriteError,
  MongoNetworkError,
  MongoOperationTimeoutError,
  MongoServerError,
} from 'mongodb';
import { ConflictError, InvalidInputError, StoreDeadlineError, StoreUnavailableError } from '@hortus/core';
import {
  mongoSettingsFromEnv,
  MongoStore,
  parseWriteConcern,
  toDomainError,
  withDeadline,
} from '@hortus/adapter-mongo';
import { rejectionOf } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

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

  it('when an operation outlasts its deadline, then StoreUnavailableError at the deadline, told as a store deadline; one within it answers', async () => {
    const never = new Promise<never>(() => undefined);
    const { error, ms } = await rejectionOf(withDeadline(never, 150));
    expect(error).to.be.an.instanceOf(StoreUnavailableError);
    // The metrics count it apart from other outages (hortus_store_deadline_hits_total).
    expect(error).to.be.an.instanceOf(StoreDeadlineError).with.property('deadline', 'store');
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
