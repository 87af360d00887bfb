/**
 * A client on the PostgreSQL store judges no lease on its own clock: its
 * `resume()` claims through the database (`claimDue`), so an operation held
 * by another owner stays with that owner, however far the client's clock
 * is ahead, until the database's `now()` passes the lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/node.js';
import { sampleRecord } from '../../src/store/contract.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { postgresForSuite, startTestDatabase, type TestDatabase } from '../helpers/postgres.js';

/** The holder's clock, and the taker's: a year apart. Neither is the database's. */
const HOLDER_NOW = 1_800_000_000_000;
const TAKER_NOW = HOLDER_NOW + 365 * 24 * 3_600_000;

const bin = postgresForSuite('postgres client');

describe.runIf(bin !== undefined)('a client on the PostgreSQL store', () => {
  let db: TestDatabase;
  let server: ReferenceServer;
  beforeAll(async () => {
    db = await startTestDatabase(bin as string);
    server = await startReferenceServer();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });

  it('takes another owner’s operation over only once the database clock says its lease ended', async () => {
    const holder = db.store({ now: () => HOLDER_NOW });
    const table = db.tableOf(holder);
    const record = sampleRecord('held', {
      request: { ...sampleRecord('held').request, url: `${server.url}/payments` },
      createdAt: TAKER_NOW - 1_000,
      deadlineAt: TAKER_NOW + 60_000,
      nextAttemptAt: 0,
      lease: { owner: 'holder', until: HOLDER_NOW + 60_000 },
    });
    await holder.put(record);
    const store = db.store({ table, now: () => TAKER_NOW });
    const client = createClient({ store, owner: 'taker', runtime: { now: () => TAKER_NOW }, leaseMs: 5_000 });
    try {
      // The taker's clock says the lease ended a year ago; the database says 60 s are left.
      expect((await client.resume()).driven).toBe(0);
      expect(server.ledger.requests).toHaveLength(0);
      expect((await store.get('held'))?.lease?.owner).toBe('holder');
      // The database's clock passes the lease end.
      await db.pool.query(`UPDATE "public"."${table}" SET lease_ends_db = lease_ends_db - 61000`);
      const summary = await client.resume();
      expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
      expect(server.ledger.requests.map((r) => r.key)).toEqual(['held']);
      expect((await store.get('held'))?.state).toBe('succeeded');
    } finally {
      await client.close();
    }
  });
});
