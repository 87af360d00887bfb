/**
 * Statements per request of `oncely/server` on PostgreSQL, counted by the
 * database itself (`pg_stat_statements`) on a throwaway cluster: `n` fresh
 * requests, then the same `n` again (replays), through the Fetch handler,
 * plain and transactional (`withIdempotency`). Only statements on the
 * idempotency table count as the guard's; the transactional mode's
 * `BEGIN`/`COMMIT` and the handler's own `INSERT` are reported beside them.
 */
import pg from 'pg';
import { findPostgresBin, startCluster } from '../../examples/fleet/cluster.js';
import { postgresIdempotencyStore } from '../../src/postgres.js';
import { idempotency } from '../../src/server.js';

export interface StatementCounts {
  mode: 'plain' | 'transactional';
  requests: number;
  /** Statements on the idempotency table per request. */
  freshPerRequest: number;
  replayPerRequest: number;
  /** Every statement the requests caused (BEGIN, COMMIT and the handler's own too), per fresh request. */
  freshAllPerRequest: number;
}

/** `undefined` when no PostgreSQL is installed. */
export async function countStatements(requests: number): Promise<StatementCounts[] | undefined> {
  const bin = findPostgresBin();
  if (bin === undefined) return undefined;
  const cluster = await startCluster(bin, { settings: { shared_preload_libraries: 'pg_stat_statements' } });
  const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
  // pool.end() resolves before its connections have closed: one may die idle as the cluster stops.
  pool.on('error', () => undefined);
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await pool.query('CREATE TABLE ledger (id bigserial PRIMARY KEY, amount integer NOT NULL)');
    const counts: StatementCounts[] = [];
    for (const mode of ['plain', 'transactional'] as const) {
      const table = `idempotency_${mode}`;
      const store = postgresIdempotencyStore({ pool, table });
      await store.migrate();
      const guard = idempotency({ store, scopeOf: () => 'acct', routes: { 'POST /payments': {} } });
      const plain = guard.wrap(async (request) => Response.json(await request.json(), { status: 201 }));
      const send = (key: string) => {
        const request = new Request('http://bench.test/payments', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ amount: 4800 }),
        });
        return mode === 'plain'
          ? plain(request)
          : guard.withIdempotency(request, async (tx) => {
              await tx.query('INSERT INTO ledger (amount) VALUES ($1)', [4800]);
              return Response.json({ ok: true }, { status: 201 });
            });
      };
      const measure = async (phase: string) => {
        await pool.query('SELECT pg_stat_statements_reset()');
        for (let i = 0; i < requests; i++) {
          const response = await send(`${mode}-${i}`);
          const replayed = response.headers.get('idempotent-replayed') === 'true';
          if (response.status !== 201 || replayed !== (phase === 'replay')) {
            throw new Error(`${mode} ${phase}: status ${response.status}, replayed ${replayed}`);
          }
        }
        const { rows } = await pool.query<{ query: string; calls: string }>(
          `SELECT query, calls FROM pg_stat_statements
            WHERE query NOT ILIKE '%pg_stat_statements%' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        const sum = (filter: (q: string) => boolean) =>
          rows.filter((r) => filter(r.query)).reduce((n, r) => n + Number(r.calls), 0) / requests;
        return { store: sum((q) => q.includes(table)), all: sum(() => true) };
      };
      const fresh = await measure('fresh');
      const replay = await measure('replay');
      counts.push({
        mode,
        requests,
        freshPerRequest: fresh.store,
        replayPerRequest: replay.store,
        freshAllPerRequest: fresh.all,
      });
    }
    return counts;
  } finally {
    await pool.end();
    await cluster.stop();
  }
}
