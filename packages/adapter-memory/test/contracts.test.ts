import { attemptCounterContract, storeContract } from '@hortus/contract-tests';
import { InProcessAttemptCounter, SystemClock } from '@hortus/core';
import { createMemoryStore } from '@hortus/adapter-memory';

storeContract('memory store', async () => {
  const store = createMemoryStore();
  return { ...store, dispose: store.close };
});

attemptCounterContract('in-process', () =>
  Promise.resolve({ counter: new InProcessAttemptCounter(new SystemClock()) }),
);
