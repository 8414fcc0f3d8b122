import { storeContract } from '@hortus/contract-tests';
import { createMemoryStore } from '@hortus/adapter-memory';

storeContract('memory store', async () => {
  const store = createMemoryStore();
  return { ...store, dispose: store.close };
});
