/**
 * What the PostgreSQL store does beyond the shared contract: option
 * validation, versioned migrations under an advisory lock, tenants, the
 * compare-and-set that fences a stale owner, quarantine under a limit,
 * LISTEN/NOTIFY wake-ups, and documents jsonb cannot hold as they are.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, LeaseLostError } from '../../src/errors.js';
import { claim as claimWith } from '../../src/flow/decide/claim.js';
import { assertFenced, CLAIM_KIT } from '../../src/flow/decide/transitions.js';
import { MIGRATIONS, type PostgresStore, postgresStore, SCHEMA_VERSION } from '../../src/postgres.js';
import { sampleRecord } from '../../src/store/contract.js';
import { postgresForSuite, suiteDatabase } from '../helpers/postgres.js';

/** The claim (claim.ts), handed what it uses of transitions.ts as the loop hands it. */
const claim = (...args: Parameters<typeof claimWith> extends [unknown, ...infer R] ? R : never) =>
  claimWith(CLAIM_KIT, ...args);

describe('postgresStore options', () => {
  const pool = { connect: async () => undefined, query: async () => undefined } as never;
  it.each([
    [{}, 'pool'],
    [{ pool, connectionString: 'postgres://x' }, 'pool'],
    [{ pool: {} as never }, 'pool'],
    [{ connectionString: '' }, 'connectionString'],
    [{ pool, poolSize: 4 }, 'poolSize'],
    [{ connectionString: 'postgres://x', poolSize: 0 }, 'poolSize'],
    [{ pool, table: 'Operations' }, 'table'],
    [{ pool, table: 'a;drop table x' }, 'table'],
    [{ pool, schema: 'x'.repeat(41) }, 'schema'],
    [{ pool, tenant: 7 as never }, 'tenant'],
    [{ pool, migrate: 'yes' as never }, 'migrate'],
  ])('%j is refused naming `%s`', (options, field) => {
    expect(() => postgresStore(options)).toThrow(InvalidOptionsError);
    try {
      postgresStore(options);
    } catch (error) {
      expect((error as InvalidOptionsError).field).toBe(field);
    }
  });
});

const bin = postgresForSuite('postgresStore');

describe.runIf(bin !== undefined)('postgresStore on a real PostgreSQL', () => {
  const db = suiteDatabase(bin);

  const versions = async (table: string) =>
    (await db.pool.query<{ version: number }>(`SELECT version FROM "public"."${table}_migrations" ORDER BY version`))
      .rows;

  it('ten handles starting at once migrate once, under the advisory lock', async () => {
    const stores = Array.from({ length: 10 }, () => db.store({ table: 'concurrent_start' }));
    const applied = await Promise.all(stores.map((s) => s.migrate()));
    expect(applied.filter((v) => v.length > 0)).toEqual([MIGRATIONS.map((m) => m.version)]);
    expect(await versions('concurrent_start')).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    // And every handle works on the one schema.
    await Promise.all(stores.map((s, i) => s.put(sampleRecord(`k${i}`))));
    expect(await stores[0]?.list()).toHaveLength(10);
  });

  it('with migrate: false nothing is created until migrate() runs', async () => {
    const store = db.store({ table: 'deployed', migrate: false });
    await expect(store.get('k')).rejects.toThrow(/does not exist/);
    expect(await store.migrate()).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await store.migrate()).toEqual([]);
    expect(await store.get('k')).toBeUndefined();
  });

  it('refuses a schema migrated by a newer oncely', async () => {
    const store = db.store({ table: 'from_the_future' });
    await store.migrate();
    await db.pool.query(
      `INSERT INTO "public"."from_the_future_migrations" (version, description) VALUES ($1, 'future')`,
      [SCHEMA_VERSION + 1],
    );
    await expect(db.store({ table: 'from_the_future' }).get('k')).rejects.toThrow(/newer than this oncely knows/);
  });

  it('documents are compressed with lz4 when the server has it (migration 4), pglz otherwise', async () => {
    const store = db.store({ table: 'compressed' });
    await store.migrate();
    const { rows } = await db.pool.query<{ lz4: boolean; method: string }>(
      `SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) AS lz4,
         (SELECT attcompression::text FROM pg_attribute
           WHERE attrelid = '"public"."compressed"'::regclass AND attname = 'record') AS method`,
    );
    // 'l' is lz4; '' the server's default (pglz unless configured otherwise).
    expect(rows[0]?.method).toBe(rows[0]?.lz4 ? 'l' : '');
  });

  it('a schema of its own is created', async () => {
    const store = db.store({ schema: 'payments_eu', table: 'ops' });
    await store.put(sampleRecord('k1'));
    const { rows } = await db.pool.query(`SELECT key FROM "payments_eu"."ops"`);
    expect(rows).toEqual([{ key: 'k1' }]);
  });

  it('tenants share a table without seeing each other', async () => {
    const a = db.store({ table: 'shared', tenant: 'a' });
    const b = db.store({ table: 'shared', tenant: 'b' });
    await a.put(sampleRecord('same-key', { meta: { tenant: 'a' } }));
    await b.put(sampleRecord('same-key', { meta: { tenant: 'b' } }));
    expect((await a.get('same-key'))?.meta).toEqual({ tenant: 'a' });
    expect((await b.get('same-key'))?.meta).toEqual({ tenant: 'b' });
    await a.delete('same-key');
    expect(await a.list()).toEqual([]);
    expect(await b.list()).toHaveLength(1);
  });

  it('a stale owner cannot write after another took over: its fenced update changes nothing', async () => {
    const first = db.store({ table: 'fence' });
    const second = db.reopen(first);
    const owner = (id: string) => ({ id, leaseMs: 1_000 });
    await first.put(sampleRecord('pay', { epoch: 0 }));
    const mine = await first.update('pay', (c) => claim(c, 'pay', owner('A'), 10_000));
    expect(mine?.epoch).toBe(1);
    // A's lease ran out (its clock says 20 s later); B claims: the epoch moves on.
    const theirs = await second.update('pay', (c) => claim(c, 'pay', owner('B'), 20_000));
    expect(theirs).toMatchObject({ epoch: 2, lease: { owner: 'B' } });
    // A still holds its cached row version: its compare-and-set is refused, it reads again, and the fence throws.
    await expect(
      first.update('pay', (c) => ({ ...assertFenced(c, 'pay', owner('A'), 1), state: 'in_flight' })),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await second.get('pay')).toEqual(theirs);
    const row = await db.pool.query(`SELECT lease_epoch, lease_owner, state FROM "public"."${db.tableOf(first)}"`);
    expect(row.rows).toEqual([{ lease_epoch: '2', lease_owner: 'B', state: 'pending' }]);
  });

  it('(the suite itself) a pool of the test database survives its idle connection dying, as when the cluster stops', async () => {
    // pool.end() resolves before its connections have closed: one still open when the cluster stops dies
    // idle, and without the listener newPool adds, node-postgres throws that death at the process.
    const pool = db.newPool(1);
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // No error listener of the test's own: an unhandled death fails the run. The pool drops the dead connection.
    const removed = new Promise((resolve) => pool.once('remove', resolve));
    await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
    await removed;
    expect(pool.totalCount).toBe(0);
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("a claim hands out frozen records; the claimer's next update starts from that very record, in one statement", async () => {
    // The store on a pool of its own that counts what it sends.
    const pool = db.newPool(2);
    let statements = 0;
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      statements++;
      return query(...args);
    }) as typeof pool.query;
    const store = postgresStore({ pool, table: 'kept' });
    const reader = db.store({ table: 'kept' });
    await store.put(sampleRecord('pay', { nextAttemptAt: 1 }));
    const [claimed] = await store.claimDue({ owner: 'w1', leaseMs: 1_000, limit: 1, dueBy: 10, nowMs: 10 });
    expect(claimed && Object.isFrozen(claimed) && Object.isFrozen(claimed.request.headers)).toBe(true);
    let seen: unknown;
    const statementsBefore = statements;
    const settled = await store.update('pay', (c) => {
      seen = c;
      return c && { ...c, state: 'succeeded', lease: undefined, retainUntil: 99 };
    });
    expect(statements).toBe(statementsBefore + 1);
    expect(seen).toBe(claimed);
    expect(Object.isFrozen(settled) && Object.isFrozen(settled?.request)).toBe(true);
    // What the update returned is what a read of the row returns.
    expect(await reader.get('pay')).toEqual(settled);
    // An invalid transition of the kept record is refused, and changes nothing.
    await expect(store.update('pay', (c) => c && { ...c, state: 'done' as never })).rejects.toThrow(
      /refusing to write/,
    );
    expect(await reader.get('pay')).toEqual(settled);
    await store.close();
    await pool.end();
  });

  it('records of one policy read back share one frozen policy snapshot, and equal what was written', async () => {
    const store = db.store();
    const policySnapshot = { attemptTimeoutMs: 5_000, profile: { statuses: { '409': 'in_progress' } } };
    const written = ['a', 'b', 'c'].map((key) => sampleRecord(key, { policySnapshot }));
    for (const record of written) await store.put(record);
    const read = await Promise.all(['a', 'b', 'c'].map((key) => store.get(key)));
    expect(read).toEqual(written);
    expect(read[1]?.policySnapshot).toBe(read[0]?.policySnapshot);
    expect(read[2]?.policySnapshot).toBe(read[0]?.policySnapshot);
    expect(Object.isFrozen(read[0]?.policySnapshot?.profile)).toBe(true);
  });

  it('the columns a drain queries always match the stored record', async () => {
    const store = db.store();
    await store.put(sampleRecord('k', { scope: 's', nextAttemptAt: 5_000, lease: { owner: 'o', until: 9_000 } }));
    await store.update('k', (c) => c && { ...c, state: 'succeeded', retainUntil: 7_000, lease: undefined });
    const { rows } = await db.pool.query(
      `SELECT state, scope, next_attempt_at, lease_owner, lease_expires_at, retain_until, lease_epoch FROM "public"."${db.tableOf(store)}"`,
    );
    expect(rows).toEqual([
      {
        state: 'succeeded',
        scope: 's',
        next_attempt_at: 5_000,
        lease_owner: null,
        lease_expires_at: null,
        retain_until: 7_000,
        lease_epoch: '0',
      },
    ]);
  });

  it('a corrupt row under a limit is quarantined and list still returns `limit` healthy records', async () => {
    const store = db.store();
    const reports: string[] = [];
    store.onQuarantine((entry) => reports.push(entry.id));
    await store.put(sampleRecord('a', { nextAttemptAt: 1 }));
    await store.put(sampleRecord('b', { nextAttemptAt: 2 }));
    await store.put(sampleRecord('c', { nextAttemptAt: 3 }));
    await db.corrupt(store, 'a', JSON.stringify({ ...sampleRecord('a'), attempts: 'none' }));
    expect((await store.list({ limit: 2 })).map((r) => r.key)).toEqual(['b', 'c']);
    expect(reports).toEqual(['a']);
    const [entry] = await store.quarantined();
    expect(entry?.raw).toContain('"attempts": "none"');
    // Another handle sees the quarantine, but only the handle that moved the row reported it.
    expect((await db.reopen(store).quarantined()).map((q) => q.id)).toEqual(['a']);
  });

  it('listSummaries serves the columns, and reads whole a row whose document disagrees with them: quarantined', async () => {
    const store = db.store();
    const reports: string[] = [];
    store.onQuarantine((entry) => reports.push(entry.id));
    await store.put(sampleRecord('plain', { nextAttemptAt: 1, seq: 7, scope: 's', lease: { owner: 'o', until: 9 } }));
    await store.put(sampleRecord('edited', { nextAttemptAt: 2 }));
    await store.put(sampleRecord('broken', { nextAttemptAt: 3 }));
    // Behind the store's back: a valid document that no longer matches its columns (the state column says
    // pending, the document failed: which one is true?), and a corrupt one. Both are moved aside, reported.
    await db.corrupt(store, 'edited', JSON.stringify(sampleRecord('edited', { nextAttemptAt: 2, state: 'failed' })));
    await db.corrupt(store, 'broken', JSON.stringify({ ...sampleRecord('broken', { nextAttemptAt: 3 }), epoch: 'x' }));
    const summaries = await store.listSummaries?.({ limit: 2 });
    expect(summaries).toEqual([
      {
        key: 'plain',
        state: 'pending',
        nextAttemptAt: 1,
        createdAt: 1_000,
        scope: 's',
        seq: 7,
        lease: { owner: 'o', until: 9 },
      },
    ]);
    expect(await store.listSummaries?.({})).toHaveLength(1);
    expect(reports).toEqual(['edited', 'broken']);
    expect((await store.quarantined()).find((q) => q.id === 'edited')?.problems).toEqual([
      'state column says pending, the document failed',
    ]);
  });

  it('a body holding U+0000 (jsonb cannot) is stored with U+FFFD instead of failing the write', async () => {
    const store = db.store();
    const record = sampleRecord('nul', {
      request: { ...sampleRecord('nul').request, body: { encoding: 'text', text: 'a\u0000b \\u0000 c' } },
    });
    await store.put(record);
    const body = (await store.get('nul'))?.request.body;
    expect(body).toEqual({ encoding: 'text', text: 'a\ufffdb \\u0000 c' });
  });

  it('LISTEN/NOTIFY wakes subscribers when work is enqueued unleased or a lease is released', async () => {
    const store = db.store();
    const other = db.reopen(store);
    await store.migrate();
    let wakes = 0;
    let woken: () => void = () => undefined;
    const unsubscribe = other.onWake(() => {
      wakes++;
      woken();
    });
    const next = () => new Promise<void>((resolve) => (woken = resolve));
    await next(); // the wake-up every new listener gets, for work enqueued before it listened
    const baseline = wakes;
    let wake = next();
    await store.put(sampleRecord('leased', { lease: { owner: 'o', until: 1 } }));
    await store.put(sampleRecord('free'));
    await wake;
    expect(wakes).toBe(baseline + 1); // the leased one woke nobody
    wake = next();
    await store.update('leased', (c) => c && { ...c, lease: undefined });
    await wake;
    expect(wakes).toBe(baseline + 2);
    unsubscribe();
    await store.put(sampleRecord('after'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(wakes).toBe(baseline + 2);
  });

  it('clockSkewMs measures this process against the database clock', async () => {
    const store = db.store();
    // Same host, same clock: off by no more than the round trip.
    expect(Math.abs(await store.clockSkewMs())).toBeLessThan(250);
  });

  it('close() of a store on its own connection string ends its pool', async () => {
    const store: PostgresStore = postgresStore({ connectionString: db.url, table: 'own_pool' });
    await store.put(sampleRecord('k'));
    await store.close();
    await expect(store.get('k')).rejects.toThrow();
  });
});
