/**
 * The PostgreSQL store names the statements every operation runs (read,
 * write, claim), so each connection plans them once; with
 * `preparedStatements: false` it sends them unnamed (a pooler that cannot
 * keep a session's prepared statements). Both give the same records. The
 * pools here have one connection, so `pg_prepared_statements` (a session's
 * own) shows what the store left on it. And the claim's plan: read off the
 * index in claim order, no sort of the backlog.
 */
import { describe, expect, it } from 'vitest';
import type { InvalidOptionsError } from '../../src/errors.js';
import { postgresStore } from '../../src/postgres.js';
import { sampleRecord } from '../../src/store/contract.js';
import { claimValues } from '../../src/store/postgres/claim.js';
import { validateOptions } from '../../src/store/postgres/options.js';
import { statements } from '../../src/store/postgres/statements.js';
import { postgresForSuite, suiteDatabase } from '../helpers/postgres.js';

describe('postgresStore preparedStatements', () => {
  it.each(['yes', 1, null])('%j is refused naming the field', (value) => {
    expect(() => postgresStore({ connectionString: 'postgres://x', preparedStatements: value as never })).toThrow(
      expect.objectContaining({ field: 'preparedStatements' }) as unknown as InvalidOptionsError,
    );
  });
});

const bin = postgresForSuite('postgresStore statements');

describe.runIf(bin !== undefined)('postgresStore statements on a real PostgreSQL', () => {
  const db = suiteDatabase(bin);

  /** Puts, reads, updates and claims through a one-connection pool; returns the prepared statements left on it. */
  async function workOn(table: string, preparedStatements?: boolean) {
    const pool = db.newPool(1);
    const store = postgresStore({ pool, table, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
    await store.put(sampleRecord('a', { nextAttemptAt: 1 }));
    await store.put(sampleRecord('b', { nextAttemptAt: 2 }));
    const read = await store.get('a');
    const updated = await store.update('a', (r) => (r === undefined ? r : { ...r, nextAttemptAt: 3 }));
    const claimed = await store.claimDue({ owner: 'w1', leaseMs: 1_000, limit: 10, dueBy: 10_000, nowMs: 10_000 });
    const again = await store.claimDue({ owner: 'w2', leaseMs: 1_000, limit: 10, dueBy: 10_000, nowMs: 10_000 });
    const { rows } = await pool.query<{ name: string; statement: string }>(
      'SELECT name, statement FROM pg_prepared_statements ORDER BY name',
    );
    return { read, updated, claimed, again, prepared: rows };
  }

  it('by default, the read, the write and the claim are prepared once per connection', async () => {
    const { read, updated, claimed, again, prepared } = await workOn('named');
    expect(read?.key).toBe('a');
    expect(updated?.nextAttemptAt).toBe(3);
    expect(claimed.map((r) => [r.key, r.lease?.owner, r.epoch])).toEqual([
      ['b', 'w1', 1],
      ['a', 'w1', 1],
    ]);
    // The second claim ran the same prepared statement and found both leased.
    expect(again).toEqual([]);
    expect(prepared.every((p) => p.name.startsWith('oncely_'))).toBe(true);
    const kinds = prepared.map((p) => p.statement.trim().slice(0, 12));
    expect(kinds).toEqual(expect.arrayContaining(['SELECT rev::', 'WITH picked ']));
    expect(prepared.some((p) => p.statement.includes('UPDATE "public"."named" SET fingerprint'))).toBe(true);
  });

  it('preparedStatements: false leaves none on the connection, and gives the same records', async () => {
    const named = await workOn('named_again');
    const unnamed = await workOn('unnamed', false);
    expect(unnamed.prepared).toEqual([]);
    const shape = (r: typeof named) => ({
      read: r.read?.key,
      updated: r.updated?.nextAttemptAt,
      claimed: r.claimed.map((c) => [c.key, c.lease, c.epoch]),
      again: r.again.length,
    });
    expect(shape(unnamed)).toEqual(shape(named));
  });

  it('a claim reads a backlog of 300 in claim order off its index and stops at its limit, sorting nothing', async () => {
    const store = db.store({ table: 'claim_plan' });
    for (let i = 0; i < 300; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          store.put(sampleRecord(`k${i + j}`, { nextAttemptAt: 1 + ((i + j) % 7) })),
        ),
      );
    }
    const sql = statements(validateOptions({ pool: db.pool, table: 'claim_plan' }).names, false);
    const values = claimValues('', { owner: 'w', leaseMs: 1_000, limit: 4, dueBy: 10_000, nowMs: 10_000 });
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>({
        text: `EXPLAIN (ANALYZE, FORMAT TEXT) ${sql.claim.text}`,
        values,
      });
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using claim_plan_claim_order on claim_plan o .*rows=4 loops=1/);
      expect(plan).not.toMatch(/Sort/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('two tables on one connection get statements of their own names', async () => {
    const pool = db.newPool(1);
    const one = postgresStore({ pool, table: 'first_of_two' });
    const two = postgresStore({ pool, table: 'second_of_two' });
    await one.put(sampleRecord('k', { meta: { table: 1 } }));
    await two.put(sampleRecord('k', { meta: { table: 2 } }));
    expect((await one.get('k'))?.meta).toEqual({ table: 1 });
    expect((await two.get('k'))?.meta).toEqual({ table: 2 });
    const { rows } = await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    expect(rows.filter((r) => r.statement.includes('"first_of_two"'))).toHaveLength(1);
    expect(rows.filter((r) => r.statement.includes('"second_of_two"'))).toHaveLength(1);
  });
});
