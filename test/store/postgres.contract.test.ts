import { describe, it } from 'vitest';
import type { PostgresStore } from '../../src/postgres.js';
import { storeContract } from '../../src/store.js';
import { postgresForSuite, suiteDatabase } from '../helpers/postgres.js';

const bin = postgresForSuite('postgresStore contract');

describe.runIf(bin !== undefined)('postgresStore: the store contract', () => {
  const db = suiteDatabase(bin);

  for (const c of storeContract({
    create: () => db.store(),
    reopen: (store) => db.reopen(store as PostgresStore),
    corrupt: (store, key, text) => db.corrupt(store as PostgresStore, key, text),
    parallelism: 40,
  })) {
    it(c.name, c.run);
  }
});
