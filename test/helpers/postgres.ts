/**
 * Real PostgreSQL for the tests: a throwaway cluster (examples/fleet/cluster.ts:
 * temp directory, initdb, pg_ctl on a free port, run as the `postgres` user
 * when the tests run as root) started once per test file.
 *
 * Missing server binaries fail the suite under CI (`CI` set: it must not pass
 * by skipping; `.ci/run` installs Debian's postgresql) and skip it with a
 * printed reason elsewhere.
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { findPostgresBin, type PostgresCluster, startCluster } from '../../examples/fleet/cluster.js';
import { createClient } from '../../src/node.js';
import { type PostgresStore, type PostgresStoreOptions, postgresStore } from '../../src/postgres.js';
import type { PgWorkerConfig } from '../crash/postgres-worker.js';
import { bundledScript } from './bundled-worker.js';
import type { Worker } from './file-worker.js';

export type { PostgresCluster } from '../../examples/fleet/cluster.js';

function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/** The server binaries' directory for `suite`, or undefined (skip) outside CI when there are none. */
export function postgresForSuite(suite: string): string | undefined {
  const bin = findPostgresBin();
  if (bin !== undefined) return bin;
  const reason =
    'PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or in /usr/lib/postgresql/<version>/bin; ' +
    'install them (Debian: apt-get install postgresql)';
  if (isCi()) throw new Error(`${suite}: ${reason}`);
  console.warn(`SKIPPED ${suite}: ${reason}`);
  return undefined;
}

/** A cluster plus a pool on it, and fresh tables for each store a test asks for. */
export interface TestDatabase {
  cluster: PostgresCluster;
  url: string;
  pool: pg.Pool;
  /** A store on a table no other test uses (closed by `close`). */
  store(options?: Omit<PostgresStoreOptions, 'pool' | 'connectionString'>): PostgresStore;
  /**
   * A pool of the test's own on this cluster, ended by `close` before the cluster stops. Its idle
   * connections' deaths are ignored: `pool.end()` resolves before its connections have closed, so
   * one may still be open when the cluster stops, and node-postgres reports its death on the pool
   * (an uncaught exception without a listener).
   */
  newPool(max: number): pg.Pool;
  /** A second handle on the same table as `store`, over its own pool (as another process would have). */
  reopen(store: PostgresStore): PostgresStore;
  /** Overwrites the stored document of `key`, behind the store's back (non-JSON text is stored as a JSON string). */
  corrupt(store: PostgresStore, key: string, text: string): Promise<void>;
  /** The table a store of `store()` uses. */
  tableOf(store: PostgresStore): string;
  close(): Promise<void>;
}

let tables = 0;

export async function startTestDatabase(bin: string): Promise<TestDatabase> {
  const cluster = await startCluster(bin);
  const url = cluster.url;
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  // node-postgres reports an idle connection's death (the cluster stopping) on its pool: without a
  // listener that is an uncaught exception. The tests' own pools ignore it; the store handles its own.
  pool.on('error', () => undefined);
  const opened: PostgresStore[] = [];
  const extraPools: pg.Pool[] = [];
  const tableOf = new Map<PostgresStore, { table: string; options: Omit<PostgresStoreOptions, 'pool'> }>();
  const db: TestDatabase = {
    cluster,
    url,
    pool,
    store(options = {}) {
      const table = options.table ?? `t${process.pid}_${++tables}`;
      const store = postgresStore({ ...options, pool, table });
      opened.push(store);
      tableOf.set(store, { table, options: { ...options, table } });
      return store;
    },
    newPool(max) {
      const other = new pg.Pool({ connectionString: url, max });
      other.on('error', () => undefined);
      extraPools.push(other);
      return other;
    },
    reopen(store) {
      const known = tableOf.get(store);
      if (known === undefined) throw new Error('reopen: not a store of this test database');
      const again = postgresStore({ ...known.options, pool: db.newPool(4) });
      opened.push(again);
      tableOf.set(again, known);
      return again;
    },
    async corrupt(store, key, text) {
      const known = tableOf.get(store);
      if (known === undefined) throw new Error('corrupt: not a store of this test database');
      let json = text;
      try {
        JSON.parse(text);
      } catch {
        // jsonb holds only JSON: a torn or garbage document is kept as a JSON string of the text.
        json = JSON.stringify(text);
      }
      const result = await pool.query(
        `UPDATE "public"."${known.table}" SET record = $2::jsonb, rev = rev + 1 WHERE key = $1`,
        [key, json],
      );
      if (result.rowCount !== 1) throw new Error(`corrupt: no row for ${key}`);
    },
    tableOf(store) {
      const known = tableOf.get(store);
      if (known === undefined) throw new Error('tableOf: not a store of this test database');
      return known.table;
    },
    async close() {
      for (const store of opened) await store.close();
      // A pool the test ended already is skipped (ending one twice rejects).
      for (const other of extraPools) if (!other.ended && !other.ending) await other.end();
      await pool.end();
      await cluster.stop();
    },
  };
  return db;
}

/**
 * The test database of the `describe` block it is called in: started before
 * its tests (a cluster takes seconds), closed after them. Its members may be
 * used in tests and hooks, not while the block is being collected.
 *
 * @example
 * const bin = postgresForSuite('my suite');
 * describe.runIf(bin !== undefined)('my suite', () => {
 *   const db = suiteDatabase(bin);
 *   it('stores', async () => { await db.store().put(sampleRecord('k')); });
 * });
 */
export function suiteDatabase(bin: string | undefined): TestDatabase {
  let started: TestDatabase | undefined;
  beforeAll(async () => {
    if (bin === undefined)
      throw new Error('suiteDatabase: no PostgreSQL binaries (guard the block with describe.runIf)');
    started = await startTestDatabase(bin);
  }, 60_000);
  afterAll(async () => {
    await started?.close();
  });
  const db = (): TestDatabase => {
    if (started === undefined) throw new Error('suiteDatabase: used before the suite started it');
    return started;
  };
  return {
    get cluster() {
      return db().cluster;
    },
    get url() {
      return db().url;
    },
    get pool() {
      return db().pool;
    },
    store: (options) => db().store(options),
    newPool: (max) => db().newPool(max),
    reopen: (store) => db().reopen(store),
    corrupt: (store, key, text) => db().corrupt(store, key, text),
    tableOf: (store) => db().tableOf(store),
    close: () => db().close(),
  };
}

/**
 * The fleet worker (test/crash/postgres-worker.ts) as a child process: bundled
 * once per test file, stdout read line by line. Same protocol and handle as
 * the file-store worker.
 */
const pgWorker = bundledScript(new URL('../crash/postgres-worker.ts', import.meta.url));

export function pgWorkerCommand(): Promise<string> {
  return pgWorker.ready();
}

export function disposePgWorkerBuild(): void {
  pgWorker.dispose();
}

export function spawnPgWorker(config: PgWorkerConfig): Promise<Worker> {
  return pgWorker.spawn(config);
}

function connectionRefused(): Error {
  const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  return new TypeError('fetch failed', { cause });
}

/**
 * Writes `operations` ahead into `table` through a client that cannot reach
 * the network (as test/helpers/file-offline.ts does for the file store): they
 * stay pending and unleased, with one unsent attempt, for a fleet to drain.
 */
export async function enqueueOfflinePg(
  url: string,
  table: string,
  baseUrl: string,
  operations: readonly { url: string; json: unknown; scope?: string }[],
  /** `true`: not even tried (no attempt recorded; the client may not send), as an API server that only enqueues. */
  unsent = false,
): Promise<string[]> {
  let goOffline!: () => void;
  const offline = new Promise<void>((resolve) => {
    goOffline = resolve;
  });
  const store = postgresStore({ connectionString: url, table, poolSize: 8 });
  const client = createClient({
    store,
    baseUrl,
    fetch: async () => {
      await offline;
      throw connectionRefused();
    },
    policy: { backoff: { baseDelayMs: 1, maxDelayMs: 1 } },
    ...(unsent ? { mayAttempt: () => false } : {}),
  });
  const keys: string[] = [];
  const batch = 50;
  for (let i = 0; i < operations.length; i += batch) {
    const enqueued = await Promise.all(
      operations.slice(i, i + batch).map((op) => client.enqueue({ method: 'POST', ...op })),
    );
    keys.push(...enqueued.map((e) => e.key));
  }
  goOffline();
  await client.close();
  await store.close();
  return keys;
}
