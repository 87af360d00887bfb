/**
 * The fleet benchmark's side of the database: writing each contender's
 * backlog, and counting what the workers sent with pg_stat_statements (the
 * server's own count, the same for oncely and graphile-worker, whatever
 * pool or client each uses).
 */
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import { createClient } from 'oncely/node';
import { postgresStore } from 'oncely/postgres';
import pg from 'pg';

/** The server settings the benchmark's cluster starts with. */
/**
 * pg_stat_statements, and room for three fleets of 8 workers idling on
 * their pools at once (oncely's, and graphile-worker's two: up to
 * concurrency + 2 connections per process each).
 */
export const FLEET_CLUSTER_SETTINGS = { shared_preload_libraries: 'pg_stat_statements', max_connections: '300' };

/** A statement the workers sent, over one drain. */
export interface StatementCount {
  /** The statement's first 80 characters, whitespace squeezed. */
  query: string;
  calls: number;
  meanMs: number;
}

export interface FleetDatabase {
  /** Writes `count` payments ahead for oncely: pending, unleased, no attempt (as an API that only enqueues leaves them). */
  backlogOncely(count: number, from: number): Promise<void>;
  /** Adds `count` payment jobs for graphile-worker (its `addJobs`, 50 a statement). */
  backlogGraphile(count: number, from: number): Promise<void>;
  /** Forgets every statement counted so far. */
  reset(): Promise<void>;
  /** Every statement counted since `reset`, most called first (the benchmark's own look-ups left out). */
  statements(): Promise<StatementCount[]>;
  close(): Promise<void>;
}

export async function openFleetDatabase(url: string, api: string, table: string): Promise<FleetDatabase> {
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  // An idle connection's death must not crash the benchmark (graphile-worker warns when a pool has no handlers).
  admin.on('error', () => undefined);
  admin.on('connect', (connection) => connection.on('error', () => undefined));
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const store = postgresStore({ connectionString: url, table, poolSize: 8 });
  await store.migrate();
  // makeWorkerUtils applies graphile-worker's migrations on first use.
  const graphile: WorkerUtils = await makeWorkerUtils({ pgPool: admin });
  await graphile.migrate();
  const batches = async (count: number, from: number, write: (numbers: number[]) => Promise<unknown>) => {
    for (let i = 0; i < count; i += 50) {
      await write(Array.from({ length: Math.min(50, count - i) }, (_, j) => from + i + j));
    }
  };
  return {
    async backlogOncely(count, from) {
      // A client that may not send keeps looking at what it wrote (held back by `mayAttempt`) until it is
      // closed: closed here, before the drain, so none of its statements are counted as the fleet's.
      const client = createClient({ store, baseUrl: api, owner: 'enqueuer', mayAttempt: () => false });
      await batches(count, from, (numbers) =>
        Promise.all(
          numbers.map((n) => client.enqueue({ method: 'POST', url: '/payments', json: { payment: n, amount: 100 } })),
        ),
      );
      await client.close();
    },
    backlogGraphile: (count, from) =>
      batches(count, from, (numbers) =>
        graphile.addJobs(
          numbers.map((n) => ({ identifier: 'pay', payload: { key: `gw-${n}`, payment: n, amount: 100 } })),
        ),
      ),
    async reset() {
      await admin.query('SELECT pg_stat_statements_reset()');
    },
    async statements() {
      const { rows } = await admin.query<{ query: string; calls: string; mean: number }>(
        `SELECT query, calls, mean_exec_time AS mean FROM pg_stat_statements
         WHERE query NOT ILIKE '%pg_stat_statements%' ORDER BY calls DESC`,
      );
      return rows.map((r) => ({
        query: r.query.replace(/\s+/g, ' ').trim().slice(0, 80),
        calls: Number(r.calls),
        meanMs: r.mean,
      }));
    },
    async close() {
      await store.close();
      await graphile.release();
      await admin.end();
    },
  };
}
