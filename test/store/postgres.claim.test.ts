/**
 * The PostgreSQL store's claim (`claimDue`, one statement) and its leases on
 * the database's clock, plus the checks of the fleet verification: a
 * schema-level migration lock, a listener outside the pool, columns checked
 * against the document on read. Worker clocks here are fixed numbers far
 * from the database's: only the database's `now()` may decide a lease.
 */
import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { InvalidOptionsError } from '../../src/errors.js';
import { type PostgresStore, postgresStore } from '../../src/postgres.js';
import { sampleRecord } from '../../src/store/contract.js';
import { postgresForSuite, suiteDatabase } from '../helpers/postgres.js';

/** A worker clock ten minutes ahead of any other used here, and one far behind. */
const AHEAD = 1_900_000_000_000;
const BEHIND = 1_000_000;

describe('postgresStore connectionTimeoutMs', () => {
  it.each([0, 1.5, -1, 'x'])('%j is refused naming the field', (value) => {
    expect(() => postgresStore({ connectionString: 'postgres://x', connectionTimeoutMs: value as never })).toThrow(
      expect.objectContaining({ field: 'connectionTimeoutMs' }) as unknown as InvalidOptionsError,
    );
  });
});

const bin = postgresForSuite('postgresStore claims');

describe.runIf(bin !== undefined)('postgresStore claimDue on a real PostgreSQL', () => {
  const db = suiteDatabase(bin);

  const claim = (store: PostgresStore, owner: string, nowMs: number, limit = 10, keys?: string[]) =>
    store.claimDue({ owner, leaseMs: 1_000, limit, dueBy: nowMs, nowMs, ...(keys === undefined ? {} : { keys }) });
  const columns = async (store: PostgresStore) =>
    (
      await db.pool.query(
        `SELECT key, lease_owner, lease_epoch::int AS epoch, record -> 'epoch' AS doc_epoch, record -> 'lease' AS doc_lease
         FROM "public"."${db.tableOf(store)}" ORDER BY key`,
      )
    ).rows;

  it('claims due, unleased, open operations in one go, with a new epoch in the columns and the document', async () => {
    const store = db.store();
    await store.put(sampleRecord('a', { nextAttemptAt: 1, epoch: 3 }));
    await store.put(sampleRecord('b', { nextAttemptAt: 2 }));
    await store.put(sampleRecord('later', { nextAttemptAt: 50_000 }));
    await store.put(sampleRecord('done', { nextAttemptAt: 1, state: 'succeeded', retainUntil: 9 }));
    const claimed = await claim(store, 'w1', 10_000);
    expect(claimed.map((r) => [r.key, r.epoch, r.lease])).toEqual([
      ['a', 4, { owner: 'w1', until: 11_000 }],
      ['b', 1, { owner: 'w1', until: 11_000 }],
    ]);
    expect(await columns(store)).toContainEqual({
      key: 'a',
      lease_owner: 'w1',
      epoch: 4,
      doc_epoch: 4,
      doc_lease: { owner: 'w1', until: 11_000 },
    });
    // Held now (the database says so): nobody claims them again, whatever their clock says.
    expect(await claim(db.reopen(store), 'w2', AHEAD)).toEqual([expect.objectContaining({ key: 'later' })]);
    // The claimer's next write is one compare-and-set on the row version it claimed.
    expect(await store.update('a', (r) => r && { ...r, state: 'in_flight' })).toMatchObject({ epoch: 4 });
  });

  it('a lease ends when the database clock says so, never a worker clock', async () => {
    // The holder's clock is far behind, the taker's far ahead: neither matters.
    const holder = db.store({ now: () => BEHIND });
    const taker = db.reopen(holder);
    await holder.put(sampleRecord('pay', { nextAttemptAt: 0, lease: { owner: 'h', until: BEHIND + 1_000 } }));
    expect(await claim(taker, 't', AHEAD)).toEqual([]);
    expect(await claim(taker, 't', AHEAD, 1, ['pay'])).toEqual([]);
    // The holder renews from its own clock: the database still counts what it had left, from its now().
    await holder.update('pay', (r) => r && { ...r, lease: { owner: 'h', until: BEHIND + 60_000 } });
    const { rows } = await db.pool.query<{ left: number }>(
      `SELECT lease_ends_db - extract(epoch FROM now()) * 1000 AS left FROM "public"."${db.tableOf(holder)}"`,
    );
    expect(rows[0]?.left).toBeGreaterThan(50_000);
    expect(rows[0]?.left).toBeLessThanOrEqual(60_000);
    // The database's clock moves past the lease: now anyone may take it, by key or in a claim.
    await db.pool.query(`UPDATE "public"."${db.tableOf(holder)}" SET lease_ends_db = lease_ends_db - 61000`);
    expect((await claim(taker, 't', BEHIND, 1, ['pay'])).map((r) => [r.key, r.lease?.owner])).toEqual([['pay', 't']]);
  });

  it('can record attempt 1 as started in the claim itself, as startAttempt would, and nothing else', async () => {
    const store = db.store();
    const policySnapshot = { attemptTimeoutMs: 2_000 };
    await store.put(sampleRecord('fresh', { nextAttemptAt: 1, deadlineAt: 100_000, policySnapshot }));
    await store.put(sampleRecord('near', { nextAttemptAt: 2, deadlineAt: 10_500, policySnapshot }));
    const tried = { n: 1, owner: 'old', startedAt: 5, endedAt: 6, class: 'not_sent', sent: 'not' } as const;
    await store.put(
      sampleRecord('retry', { nextAttemptAt: 3, deadlineAt: 100_000, policySnapshot, attempts: [tried] }),
    );
    await store.put(sampleRecord('unknown-policy', { nextAttemptAt: 4, deadlineAt: 100_000 }));
    const claimed = await store.claimDue({
      owner: 'w',
      leaseMs: 1_000,
      limit: 10,
      dueBy: 10_000,
      nowMs: 10_000,
      startFirstAttempt: true,
    });
    expect(claimed.map((r) => [r.key, r.state, r.attempts.length, r.lease?.until])).toEqual([
      // 10 s + the attempt timeout + the lease.
      ['fresh', 'in_flight', 1, 13_000],
      // The attempt timeout cut at the deadline: 500 ms.
      ['near', 'in_flight', 1, 11_500],
      ['retry', 'pending', 1, 11_000],
      ['unknown-policy', 'pending', 0, 11_000],
    ]);
    expect(claimed[0]?.attempts).toEqual([{ n: 1, owner: 'w', startedAt: 10_000, sent: 'maybe' }]);
    // The columns agree with the documents (a read would quarantine them otherwise).
    expect((await db.reopen(store).get('fresh'))?.state).toBe('in_flight');
    expect(await store.quarantined()).toEqual([]);
  });

  it('a document whose attempts are not a list is claimed as it is and moved aside, not an error for the claim', async () => {
    const store = db.store();
    const policySnapshot = { attemptTimeoutMs: 2_000 };
    await store.put(sampleRecord('bad', { nextAttemptAt: 1, deadlineAt: 100_000, policySnapshot }));
    await store.put(sampleRecord('good', { nextAttemptAt: 2, deadlineAt: 100_000, policySnapshot }));
    await db.pool.query(
      `UPDATE "public"."${db.tableOf(store)}" SET record = record || '{"attempts": {}}' WHERE key = 'bad'`,
    );
    const claimed = await store.claimDue({
      owner: 'w',
      leaseMs: 1_000,
      limit: 10,
      dueBy: 10_000,
      nowMs: 10_000,
      startFirstAttempt: true,
    });
    expect(claimed.map((r) => [r.key, r.state, r.attempts.length])).toEqual([['good', 'in_flight', 1]]);
    expect((await store.quarantined()).map((q) => q.id)).toEqual(['bad']);
  });

  it('a document read as a clean copy (an unknown field dropped) is what the next update sees, without that field', async () => {
    const store = db.store();
    await store.put(sampleRecord('x', { nextAttemptAt: 1 }));
    await db.pool.query(
      `UPDATE "public"."${db.tableOf(store)}" SET record = record || '{"note": "edited by hand"}' WHERE key = 'x'`,
    );
    const seen: object[] = [];
    // Writes nothing: the record read is kept for the next update of this key.
    await store.update('x', (r) => r);
    await store.update('x', (r) => {
      if (r !== undefined) seen.push(r);
      return r && { ...r, nextAttemptAt: 5 };
    });
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) expect(Object.keys(r)).not.toContain('note');
    expect((await db.reopen(store).get('x'))?.nextAttemptAt).toBe(5);
  });

  it('only the head of each scope is claimable, in write order', async () => {
    const store = db.store();
    await store.put(sampleRecord('s1', { scope: 's', seq: 1, nextAttemptAt: 5 }));
    await store.put(sampleRecord('s2', { scope: 's', seq: 2, nextAttemptAt: 1 }));
    await store.put(sampleRecord('free', { seq: 3, nextAttemptAt: 3 }));
    expect((await claim(store, 'w', 100)).map((r) => r.key)).toEqual(['free', 's1']);
    expect(await claim(db.reopen(store), 'w2', 100)).toEqual([]);
    await store.update('s1', (r) => r && { ...r, state: 'succeeded', retainUntil: 9, lease: undefined });
    expect((await claim(db.reopen(store), 'w2', 100)).map((r) => r.key)).toEqual(['s2']);
  });

  it('twelve handles claiming at once never get the same operation', async () => {
    const store = db.store();
    for (let i = 0; i < 120; i++) await store.put(sampleRecord(`k${i}`, { nextAttemptAt: i }));
    const handles = Array.from({ length: 12 }, () => db.reopen(store));
    // Leases long enough to outlive both rounds on the database's clock: with the helper's 1 s, a loaded machine
    // took longer than that between the rounds, and the second round took the ended leases over (as it should).
    const claimLong = (h: PostgresStore, owner: string, limit: number) =>
      h.claimDue({ owner, leaseMs: 600_000, limit, dueBy: 1_000, nowMs: 1_000 });
    const rounds = await Promise.all(handles.map((h, i) => claimLong(h, `w${i}`, 7)));
    const again = await Promise.all(handles.map((h, i) => claimLong(h, `w${i}`, 20)));
    const keys = [...rounds, ...again].flat().map((r) => r.key);
    expect(keys).toHaveLength(120);
    expect(new Set(keys).size).toBe(120);
  });

  it('a row whose state column disagrees with its document is quarantined on read, and never claimed', async () => {
    const store = db.store();
    await store.put(sampleRecord('odd', { nextAttemptAt: 0 }));
    await db.pool.query(`UPDATE "public"."${db.tableOf(store)}" SET state = 'succeeded'`);
    expect(await claim(store, 'w', 10)).toEqual([]);
    expect(await store.get('odd')).toBeUndefined();
    expect((await store.quarantined()).map((q) => [q.id, q.problems])).toEqual([
      ['odd', ['state column says succeeded, the document pending']],
    ]);
  });

  it('two tables migrated at once in one fresh schema: the schema is created once', async () => {
    const a = db.store({ schema: 'fresh_fleet', table: 'one' });
    const b = db.store({ schema: 'fresh_fleet', table: 'two' });
    await Promise.all([a.migrate(), b.migrate()]);
    await Promise.all([a.put(sampleRecord('x')), b.put(sampleRecord('y'))]);
    expect((await a.get('x'))?.key).toBe('x');
  });

  it('a pool of one connection keeps serving queries while onWake listens (the listener has its own)', async () => {
    const store = postgresStore({
      connectionString: db.url,
      table: 'one_conn',
      poolSize: 1,
      connectionTimeoutMs: 5_000,
    });
    try {
      let woken = 0;
      const off = store.onWake(() => woken++);
      await store.put(sampleRecord('k', { lease: undefined }));
      expect((await store.get('k'))?.key).toBe('k');
      off();
      expect(woken).toBeGreaterThanOrEqual(0);
    } finally {
      await store.close();
    }
  });

  it('a database that accepts but never answers fails a query after connectionTimeoutMs, never hangs', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const store = postgresStore({ connectionString: `postgres://x@127.0.0.1:${port}/x`, connectionTimeoutMs: 200 });
    try {
      await expect(store.get('k')).rejects.toThrow(/timeout/i);
    } finally {
      await store.close();
      silent.close();
    }
  });
});
