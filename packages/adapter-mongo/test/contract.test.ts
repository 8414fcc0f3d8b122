import { MongoAttemptCounter } from '@hortus/adapter-mongo';
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
});
