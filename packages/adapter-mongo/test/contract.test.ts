import { storeContract } from '@hortus/contract-tests';
import { serverSuite, useTestDatabase } from './fixture.js';

// Every contract case runs against every MongoDB-wire server, FerretDB v1 included.
describe(serverSuite('Mongo adapter against the contract suites'), () => {
  const database = useTestDatabase();

  storeContract('Mongo', async () => {
    await database().clear();
    return database().repositories;
  });
});
