import { attemptCollection, MongoAttemptCounter } from '@hortus/adapter-mongo';
import { expect } from 'chai';
import { attemptCounterContract, storeContract } from '@hortus/contract-tests';
import { serverSuite, useTestDatabase } from './fixture.js';

// Every contract case runs against every MongoDB-wire server, FerretDB v1 included.
describe(serverSuite('Mongo adapter against the contract suites'), () => {
  const database = useTestDatabase();

  storeContract('Mongo', async () => {
    await database().clear();
    return database().repositories;
  });

  attemptCounterContract('Mongo', async () => {
    await database().clear();
    return {
      counter: new MongoAttemptCounter(database().store.database),
      exactUnderConcurrency: !(await database().store.isFerretDb()),
    };
  });

  it('when attempts are counted, then the database holds the e-mail or address only as a digest', async () => {
    await database().clear();
    const counter = new MongoAttemptCounter(database().store.database);

    await counter.consume({ name: 'login-email', points: 10, windowMs: 60_000 }, 'ada@example.org');

    const documents = await database().store.db.collection(attemptCollection.name).find().toArray();
    expect(documents).to.have.lengthOf(1);
    expect(JSON.stringify(documents)).to.not.include('ada@example.org');
    expect(documents[0]?.['key']).to.match(/^login-email:[\w-]{43}$/u);
  });
});
