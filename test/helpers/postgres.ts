/**
 * Real PostgreSQL for the tests: a throwaway cluster (examples/fleet/cluster.ts:
 * temp directory, initdb, pg_ctl on a free port, run as the `postgres` user
 * when the tests run as root) started once per test file.
 *
 * Missing server binaries fail the suite under CI (`CI` set: it must not pass
 * by skipping; `.ci/run` installs Debian's postgresql) and skip it with a
 * printed reason elsewhere.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';
import { findPostgresBin, type PostgresCluster, startCluster } from '../../examples/fleet/cluster.js';
import { createClient } from '../../src/node.js';
import { type PostgresStore, type PostgresStoreOptions, postgresStore } from '../../src/postgres.js';
import type { PgWorkerConfig } from '../crash/postgres-worker.js';
import type { Worker, WorkerExit } from './file-worker.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

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
    reopen(store) {
      const known = tableOf.get(store);
      if (known === undefined) throw new Error('reopen: not a store of this test database');
      const other = new pg.Pool({ connectionString: url, max: 4 });
      other.on('error', () => undefined);
      extraPools.push(other);
      const again = postgresStore({ ...known.options, pool: other });
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
      for (const other of extraPools) await other.end();
      await pool.end();
      await cluster.stop();
    },
  };
  return db;
}

/**
 * The fleet worker (test/crash/postgres-worker.ts) as a child process: bundled
 * once per test file with esbuild (a bundled child starts in ~0.2 s), stdout
 * read line by line. Same protocol and handle as the file-store worker.
 */
let built: { dir: string; file: Promise<string> } | undefined;

export function pgWorkerCommand(): Promise<string> {
  if (built === undefined) {
    const dir = fs.mkdtempSync(join(tmpdir(), 'oncely-pgworker-'));
    const outfile = join(dir, 'worker.mjs');
    const file = build({
      entryPoints: [fileURLToPath(new URL('../crash/postgres-worker.ts', import.meta.url))],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile,
      logLevel: 'error',
      // pg is CommonJS: its require() of Node built-ins needs a real require in the ESM bundle.
      // Its optional native binding is never used.
      external: ['pg-native'],
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    }).then(() => outfile);
    built = { dir, file };
  }
  return built.file;
}

export function disposePgWorkerBuild(): void {
  if (built !== undefined) fs.rmSync(built.dir, { recursive: true, force: true });
  built = undefined;
}

export async function spawnPgWorker(config: PgWorkerConfig): Promise<Worker> {
  const file = await pgWorkerCommand();
  const child = spawn(process.execPath, [file, JSON.stringify(config)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const listeners: ((line: string) => void)[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  reader.on('line', (line) => {
    lines.push(line);
    for (const fn of listeners) fn(line);
  });
  const closed = new Promise<void>((resolve) => reader.once('close', resolve));
  const exited = new Promise<WorkerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      void closed.then(() => resolve({ code, signal, killed: signal === 'SIGKILL', lines, stderr }));
    });
  });
  return {
    child,
    pid: child.pid ?? -1,
    lines,
    onLine(fn) {
      for (const line of lines) fn(line);
      listeners.push(fn);
    },
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
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
