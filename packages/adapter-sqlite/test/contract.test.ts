import { storeContract } from '@hortus/contract-tests';
import { openTestStore } from './fixture.js';

describe('SQLite adapter against the contract suites', () => {
  // Every test gets a new file in a new directory, in WAL mode as in production, removed afterwards.
  storeContract('SQLite', async () => {
    const opened = await openTestStore();
    return { ...opened.store.repositories(), dispose: opened.dispose };
  });
});
