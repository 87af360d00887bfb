/**
 * The server half on a real PostgreSQL (a throwaway cluster): the whole
 * contract suite, then what only this store does — one atomic claim across
 * pools, statements per request, tenants, and the transactional mode where
 * the handler's own SQL and the stored response commit together.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresIdempotencyStore, postgresIdempotencyStore } from '../../src/postgres.js';
import { type ClaimRequest, idempotency, PROBLEM_TYPES } from '../../src/server.js';
import { serverConformance } from '../../src/testing.js';
import { serveFetch, type TestServer } from '../helpers/http-server.js';
import { postgresForSuite, startTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { contractSuite } from './contract-suite.js';
import { post, startApp } from './fixture.js';
import { manualSchedule } from './manual-schedule.js';

const bin = postgresForSuite('server half on PostgreSQL');
let db: TestDatabase;
let tables = 0;

/** The database's time moves on for `store`'s rows: lease and retention ends move back by `ms`. */
async function advance(store: PostgresIdempotencyStore, ms: number): Promise<void> {
  await db.pool.query(
    `UPDATE ${store.table} SET lease_until = lease_until - $1 * interval '1 millisecond',
                              retain_until = retain_until - $1 * interval '1 millisecond'`,
    [ms],
  );
}

function freshStore(options: { tenant?: string; pool?: pg.Pool } = {}): PostgresIdempotencyStore {
  return postgresIdempotencyStore({
    pool: options.pool ?? db.pool,
    table: `idem_${process.pid}_${++tables}`,
    ...options,
  });
}

describe.runIf(bin !== undefined)('oncely/server on PostgreSQL', () => {
  beforeAll(async () => {
    db = await startTestDatabase(bin as string);
  }, 60_000);
  afterAll(() => db?.close());

  contractSuite('PostgreSQL store', (style) => {
    const store = freshStore();
    return startApp(style, { store, advance: (ms) => advance(store, ms) });
  });

  it.each(['fetch', 'connect'] as const)('serverConformance passes every rule, none skipped (%s)', async (style) => {
    const store = freshStore();
    const app = await startApp(style, { store, advance: (ms) => advance(store, ms) });
    try {
      const report = await serverConformance({
        url: `${app.url}/payments`,
        headers: { 'X-Account': 'alice' },
        otherCaller: { 'X-Account': 'bob' },
        advanceTime: app.advance,
        retentionMs: 86_400_000,
        stall: { body: { stall: true }, leaseMs: 10_000 },
        effects: async () => app.effects.length,
      });
      expect(report.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    } finally {
      await app.close();
    }
  });

  const claimOf = (key: string, overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
    scope: '["POST","POST /payments","alice"]',
    key,
    fingerprint: 'f1',
    leaseMs: 10_000,
    retentionMs: 60_000,
    rerunAbandoned: false,
    atomic: false,
    ...overrides,
  });

  it('atomic-claim: 30 concurrent claims of one key over three pools → exactly one claimed', async () => {
    const first = freshStore();
    await first.migrate();
    const others = [
      first,
      ...[1, 2].map(() => postgresIdempotencyStore({ pool: db.pool, table: first.table.split('"')[3] as string })),
    ];
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => others[i % 3]?.claim(claimOf('race'))));
    expect(results.filter((r) => r?.kind === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r?.kind === 'in_progress')).toHaveLength(29);
  });

  it('tenant: two tenants on one table never meet, same scope and key', async () => {
    const a = freshStore({ tenant: 'eu' });
    const b = postgresIdempotencyStore({ pool: db.pool, table: a.table.split('"')[3] as string, tenant: 'us' });
    expect((await a.claim(claimOf('k'))).kind).toBe('claimed');
    expect((await b.claim(claimOf('k'))).kind).toBe('claimed');
  });

  it('statements: a fresh request costs 2 statements, a replay 1', async () => {
    const store = freshStore();
    await store.migrate();
    const counted = db.pool;
    const original = counted.query.bind(counted);
    let statements = 0;
    const spy = Object.assign(Object.create(counted) as pg.Pool, {
      query: (...args: Parameters<pg.Pool['query']>) => {
        statements += 1;
        return (original as (...a: unknown[]) => unknown)(...args);
      },
    });
    const measured = postgresIdempotencyStore({ pool: spy, table: store.table.split('"')[3] as string });
    const guard = idempotency({
      store: measured,
      scopeOf: () => 'alice',
      routes: { 'POST /payments': {} },
    });
    const handler = guard.wrap(() => Response.json({ id: 'pay_1' }, { status: 201 }));
    await measured.migrate();
    const request = () =>
      new Request('http://x/payments', { method: 'POST', headers: { 'Idempotency-Key': 'k' }, body: '{"a":1}' });
    statements = 0;
    expect((await handler(request())).status).toBe(201);
    expect(statements).toBe(2);
    statements = 0;
    const replay = await handler(request());
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(statements).toBe(1);
  });

  describe('transactional mode (withIdempotency)', () => {
    let server: TestServer;
    let store: PostgresIdempotencyStore;
    let payments: string;
    let holds: { arrive: () => void; gate: Promise<void> }[];
    afterEach(() => server.close());

    async function start(route: { replay?: 'stripe' | 'deterministic' } = {}) {
      store = freshStore();
      payments = `payments_${process.pid}_${++tables}`;
      holds = [];
      await db.pool.query(`CREATE TABLE ${payments} (id serial PRIMARY KEY, amount integer NOT NULL)`);
      const guard = idempotency<pg.PoolClient>({
        store,
        scopeOf: () => 'alice',
        routes: { 'POST /payments': route },
        leaseMs: 10_000,
      });
      server = await serveFetch((request) =>
        guard.withIdempotency(request, async (tx, req) => {
          const body = (await req.json()) as { amount: number; fail?: string; respond?: number };
          const { rows } = await tx.query<{ id: number }>(`INSERT INTO ${payments} (amount) VALUES ($1) RETURNING id`, [
            body.amount,
          ]);
          const hold = holds.shift();
          if (hold !== undefined) {
            hold.arrive();
            await hold.gate;
          }
          if (body.fail === 'throw') throw new Error('failed after the INSERT');
          return Response.json({ id: rows[0]?.id }, { status: body.respond ?? 201 });
        }),
      );
    }

    const count = async () => Number((await db.pool.query(`SELECT count(*) FROM ${payments}`)).rows[0].count);
    const hold = () => {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((r) => {
        arrive = r;
      });
      const gate = new Promise<void>((r) => {
        release = r;
      });
      holds.push({ arrive, gate });
      return { arrived, release };
    };

    it('the effect and the stored response commit together: replayed, one row', async () => {
      await start();
      const first = await post(server, '/payments', { key: 'k', body: { amount: 5 } });
      const again = await post(server, '/payments', { key: 'k', body: { amount: 5 } });
      expect(first.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.json).toEqual(first.json);
      expect(await count()).toBe(1);
    });

    it('a handler that throws rolls its INSERT back and releases the key: the retry runs, one row', async () => {
      await start();
      const failed = await post(server, '/payments', { key: 'k', body: { amount: 5, fail: 'throw' } });
      expect(failed.status).toBe(500);
      expect(await count()).toBe(0);
      expect((await post(server, '/payments', { key: 'k', body: { amount: 5, fail: 'throw' } })).status).toBe(500);
      expect(await count()).toBe(0);
    });

    it('deterministic: a 5xx rolls the effect back and releases the key', async () => {
      await start({ replay: 'deterministic' });
      expect((await post(server, '/payments', { key: 'k', body: { amount: 5, respond: 503 } })).status).toBe(503);
      expect(await count()).toBe(0);
      const retried = await post(server, '/payments', { key: 'k', body: { amount: 5, respond: 503 } });
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      expect(await count()).toBe(0);
    });

    it('crash mid-transaction: the lease expires, a retry runs again (no outcome proves no effect); the stale run is fenced and rolled back', async () => {
      await start();
      const gate = hold();
      const stale = post(server, '/payments', { key: 'k', body: { amount: 5 } });
      await gate.arrived;
      await advance(store, 10_000);
      const rerun = await post(server, '/payments', { key: 'k', body: { amount: 5 } });
      expect(rerun.status).toBe(201);
      gate.release();
      const late = await stale;
      expect(late.status).toBe(409);
      expect(late.json.type).toBe(PROBLEM_TYPES.inProgress);
      expect(await count()).toBe(1);
      const replay = await post(server, '/payments', { key: 'k', body: { amount: 5 } });
      expect(replay.json).toEqual(rerun.json);
    });
  });

  it.each([true, false])(
    'lease renewal: a handler held past 3 leases is "in progress" to a duplicate (renewals %s)',
    async (renew) => {
      const store = freshStore();
      const clock = { now: 0 };
      const timers = manualSchedule(clock);
      const app = await startApp('connect', {
        store,
        advance: (ms) => advance(store, ms),
        extra: { schedule: renew ? timers.schedule : () => () => undefined },
      });
      try {
        const gate = app.hold();
        const first = post(app, '/payments', { key: 'slow' });
        await gate.arrived;
        // The database's time and the schedule's move together, a sixth of the lease (10 s) at a time.
        for (let step = 0; step < 18; step++) {
          await app.advance(10_000 / 6);
          clock.now += 10_000 / 6;
          await timers.fire(clock.now);
        }
        const duplicate = await post(app, '/payments', { key: 'slow' });
        expect(duplicate.json.type).toBe(renew ? PROBLEM_TYPES.inProgress : PROBLEM_TYPES.outcomeUnknown);
        gate.release();
        expect((await first).status).toBe(201);
        // Its late outcome is stored either way (fenced by its epoch, which no one took over).
        const again = await post(app, '/payments', { key: 'slow' });
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(app.effects).toHaveLength(1);
        // The renewal timer outlives the last run by one tick at most, and arms no next one.
        expect(timers.pending).toBeLessThanOrEqual(1);
        clock.now += 10_000 / 6;
        await timers.fire(clock.now);
        expect(timers.pending).toBe(0);
      } finally {
        await app.close();
      }
    },
  );
});
