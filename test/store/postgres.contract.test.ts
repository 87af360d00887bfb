import { afterAll, beforeAll, describe, it } from 'vitest';
import type { PostgresStore } from '../../src/postgres.js';
import { storeContract } from '../../src/store.js';
import { postgresForSuite, startTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const bin = postgresForSuite('postgresStore contract');

describe.runIf(bin !== undefined)('postgresStore: the store contract', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await startTestDatabase(bin as string);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });

  for (const c of storeContract({
    create: () => db.store(),
    reopen: (store) => db.reopen(store as PostgresStore),
    corrupt: (store, key, text) => db.corrupt(store as PostgresStore, key, text),
    parallelism: 40,
  })) {
    it(c.name, c.run);
  }
});
