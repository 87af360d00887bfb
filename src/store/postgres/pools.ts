/**
 * The connections a store handle uses. With a connection string it owns two
 * pools of `poolSize`: one for durable writes and reads, and one whose
 * sessions commit asynchronously (`synchronous_commit = off`) for the writes
 * the engine marks `relaxed` and for claims that start no attempt.
 *
 * Why that keeps every promise of `WriteOptions`: an asynchronous commit is
 * visible to every other session at once (only its flush to disk is
 * deferred, by at most three times `wal_writer_delay`), and PostgreSQL
 * flushes its write-ahead log in order, so the next synchronous commit of
 * any session covers every earlier asynchronous one. A database crash can
 * lose only a relaxed write (a settle a resend under the same key repairs)
 * or a claim (its claimer's next, durable, write then finds the row
 * changed and reads again). Each operation then waits for one disk flush,
 * its attempt's start, instead of three.
 *
 * With a `pool` given, every statement goes through it, durably.
 */
import type { Pool } from 'pg';
import { loadPg } from './load-pg.js';
import type { PostgresStoreOptions } from './options.js';

export interface Pools {
  durable: Pool;
  relaxed: Pool;
  end(): Promise<void>;
}

export function openPools(options: PostgresStoreOptions, connectionTimeoutMs: number): Pools {
  const given = options.pool;
  if (given !== undefined) return { durable: given, relaxed: given, end: async () => undefined };
  const open = (relaxed: boolean): Pool => {
    const pool = new (loadPg().Pool)({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: connectionTimeoutMs,
      ...(relaxed ? { options: '-c synchronous_commit=off' } : {}),
    });
    // A pool we own must not crash the process when an idle connection dies (the server restarted).
    pool.on('error', () => undefined);
    return pool;
  };
  const durable = open(false);
  const relaxed = open(true);
  return {
    durable,
    relaxed,
    end: async () => {
      await Promise.all([durable.end(), relaxed.end()]);
    },
  };
}
