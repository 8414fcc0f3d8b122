import { storeDownContract } from '@hortus/contract-tests';
import { openTestStore } from './fixture.js';

describe('SQLite adapter against the "store is down" suite', () => {
  // Down for SQLite is a closed handle: the file cannot stop answering while it is open, but a store
  // closed under a request (shutdown, a restore) must refuse as unavailable, not throw the driver's TypeError.
  storeDownContract(
    'SQLite',
    async () => {
      const opened = await openTestStore();
      return {
        repositories: opened.store.repositories(),
        stop: () => opened.store.close(),
        dispose: opened.dispose,
      };
    },
    { withinMs: 1000 },
  );
});
