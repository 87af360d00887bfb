/**
 * Four processes drain one PostgreSQL table holding operations written
 * ahead while offline. The store's compare-and-set and the engine's leases
 * must make exactly one process send each operation, never two at once,
 * and operations of one scope must take effect in creation order, one at
 * a time, although any process may send any of them.
 */
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import type { ReferenceRequest } from '../../src/testing.js';
import { usePgFleetSuite } from '../helpers/pg-fleet-suite.js';
import { enqueueOfflinePg, postgresForSuite, spawnPgWorker } from '../helpers/postgres.js';

const OPERATIONS = Number(process.env.ONCELY_PG_OPERATIONS ?? 300);
const PROCESSES = 4;
/** Scopes of 5 operations each, for a fifth of the operations. */
const SCOPES = Math.floor(OPERATIONS / 25);
const PER_SCOPE = 5;

const bin = postgresForSuite('postgres race');

describe.runIf(bin !== undefined)('four processes drain one PostgreSQL table', () => {
  /** Per scope: the index of the last effect, and whether one is under way. */
  const scopes = new Map<string, { last: number; busy: boolean }>();
  const scopeProblems: string[] = [];

  const suite = usePgFleetSuite(bin, {
    // The business effect: checks scope order as it happens (a replay does not come here).
    handle: async (req: ReferenceRequest) => {
      const body = req.body as { scope?: string; index?: number };
      if (body.scope !== undefined && body.index !== undefined) {
        const seen = scopes.get(body.scope) ?? { last: -1, busy: false };
        if (seen.busy) scopeProblems.push(`${body.scope}: effect ${body.index} while another was under way`);
        if (body.index !== seen.last + 1) scopeProblems.push(`${body.scope}: effect ${body.index} after ${seen.last}`);
        seen.busy = true;
        scopes.set(body.scope, seen);
        // Widen the window in which a second sender of the scope would show.
        await new Promise((resolve) => setTimeout(resolve, 2));
        seen.busy = false;
        seen.last = body.index;
      }
      return { status: 201, body: { id: `res_${req.effectNumber}` } };
    },
  });

  // Two ways to a first attempt: claimed, then started in a second write (a credentials callback must run
  // first; the operations were tried once offline), or started in the claim itself (never tried, no callback).
  it.each([
    { table: 'race', credentials: true, unsent: false },
    { table: 'race_fold', credentials: false, unsent: true },
  ])(
    `${OPERATIONS} operations: ${OPERATIONS} effects, never two requests of one key at once, scope order kept (%o)`,
    async ({ table, credentials, unsent }) => {
      const db = suite.db();
      const server = suite.server();
      const operations = Array.from({ length: OPERATIONS }, (_, i) => {
        if (i >= SCOPES * PER_SCOPE) return { url: '/race/payments', json: { op: i } };
        const scope = `${table}-cart-${i % SCOPES}`;
        const index = Math.floor(i / SCOPES);
        return { url: '/race/payments', json: { op: i, scope, index }, scope };
      });
      const keys = await enqueueOfflinePg(db.url, table, server.url, operations, unsent);
      const mine = new Set(keys);
      expect(mine.size).toBe(OPERATIONS);
      const requests = () => server.ledger.requests.filter((r) => r.key !== undefined && mine.has(r.key));
      expect(requests()).toHaveLength(0);

      const started = Date.now();
      const workers = await Promise.all(
        Array.from({ length: PROCESSES }, (_, i) =>
          spawnPgWorker({
            url: db.url,
            table,
            baseUrl: server.url,
            path: '/race/payments',
            enqueue: 0,
            opPrefix: `p${i}`,
            // No crash here: leases long enough that no live owner ever loses one.
            leaseMs: 5_000,
            attemptTimeoutMs: 5_000,
            concurrency: 16,
            credentials,
          }),
        ),
      );
      const exits = await Promise.all(workers.map((w) => w.exited));
      const drainMs = Date.now() - started;
      expect(exits.map((e) => (e.code === 0 ? 0 : `${e.code}: ${e.stderr}`))).toEqual(exits.map(() => 0));

      const { ledger } = server;
      const effects = keys.reduce((sum, key) => sum + ledger.effectCount(key), 0);
      const maxConcurrent = Math.max(...keys.map((key) => ledger.maxConcurrent(key)));
      const mineScoped = [...scopes].filter(([scope]) => scope.startsWith(`${table}-`));
      console.log(
        `postgres race figures: ${JSON.stringify({
          table,
          operations: OPERATIONS,
          processes: PROCESSES,
          scoped: SCOPES * PER_SCOPE,
          effects,
          requests: requests().length,
          maxConcurrent,
          fenced: exits.flatMap((e) => e.lines.filter((l) => l.startsWith('fenced'))).length,
          drainMs,
        })}`,
      );
      expect(scopeProblems).toEqual([]);
      expect(maxConcurrent).toBe(1);
      expect(effects).toBe(OPERATIONS);
      for (const key of keys) expect(ledger.effectCount(key), key).toBe(1);
      // Each operation was sent once: no process sent what another had done.
      expect(requests()).toHaveLength(OPERATIONS);
      for (const [scope, seen] of mineScoped) expect(seen.last, scope).toBe(PER_SCOPE - 1);
      expect(mineScoped).toHaveLength(SCOPES);

      const store = postgresStore({ connectionString: db.url, table });
      const records = await store.list();
      expect(records).toHaveLength(OPERATIONS);
      expect(records.every((r) => r.state === 'succeeded')).toBe(true);
      // Never tried before the fleet: one attempt each (started in the claim when no callback had to run first).
      if (unsent) expect(records.every((r) => r.attempts.length === 1)).toBe(true);
      expect(await store.quarantined()).toEqual([]);
      await store.close();
    },
    60_000 + OPERATIONS * 200,
  );
});
