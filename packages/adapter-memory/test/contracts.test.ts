import { attemptCounterContract, storeContract } from '@hortus/contract-tests';
import { InProcessAttemptCounter, SystemClock } from '@hortus/core';
import { createMemoryStore } from '@hortus/adapter-memory';

// The "store is down" suite (storeDownContract) is not run on memory: the store lives in the process, so
// it has no state in which it stops answering (no connection to lose, no handle to close under a request).
// A stop that stops nothing fails every case of that suite, which is how the suite was checked to fail.

storeContract('memory store', async () => {
  const store = createMemoryStore();
  return { ...store, dispose: store.close };
});

attemptCounterContract('in-process', () =>
  Promise.resolve({ counter: new InProcessAttemptCounter(new SystemClock()) }),
);
