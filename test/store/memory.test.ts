import { describe, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import type { MemoryStore } from '../../src/store/memory.js';
import { storeContract } from '../../src/store.js';

describe('memory store contract', () => {
  for (const c of storeContract({
    create: () => memoryStore(),
    corrupt: (store, key, text) => (store as MemoryStore).corrupt(key, text),
  })) {
    it(c.name, c.run);
  }
});
