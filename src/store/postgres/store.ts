/**
 * The PostgreSQL store: one table shared by every process of a fleet, on
 * any number of hosts. Each record is a row: the validated record document
 * (`jsonb`) plus copies of the fields queries use (state, due time, scope,
 * lease owner, lease epoch), written together.
 *
 * `update` is a compare-and-set on the row version (`rev`) and the lease
 * epoch: read the row, run the updater, then `UPDATE … WHERE rev = $read
 * AND lease_epoch = $read`. Zero rows means someone wrote in between (another
 * process's claim, say): the store reads again and the updater decides on
 * the fresh record, so the engine's fencing (`assertFenced`) sees any newer
 * epoch and a stale owner's write changes nothing. Two round trips, no
 * transaction held open across them; with the row version this handle
 * wrote last still cached, a write is one round trip.
 */
import type { Pool } from 'pg';
import type { OperationRecord } from '../../model.js';
import type { OperationStore, QuarantineEntry, RecordFilter, Updater } from '../store.js';
import { RecordCache } from './cache.js';
import { loadPg } from './load-pg.js';
import { migrate } from './migrations.js';
import { type PostgresStoreOptions, validateOptions } from './options.js';
import {
  type Checked,
  checkRow,
  columnValues,
  filterSql,
  insertSql,
  READ_COLUMNS,
  type StoredRow,
  updateSql,
  upsertSql,
  validForWrite,
} from './rows.js';
import { listSummaries } from './summaries.js';
import { wakeChannel } from './wake.js';

export type { PostgresStoreOptions } from './options.js';

export interface PostgresStore extends OperationStore {
  /**
   * Applies the schema migrations not applied yet (idempotent; safe from
   * many processes at once). Resolves with the versions it applied.
   * @example await postgresStore({ connectionString, migrate: false }).migrate()
   */
  migrate(): Promise<number[]>;
  /**
   * Calls `fn` when work may have become available to any worker (an
   * operation enqueued unleased, or a lease released), via LISTEN/NOTIFY on
   * a connection held while anyone subscribes. A hint only: keep polling.
   * Returns an unsubscribe.
   * @example store.onWake(() => void client.resume())
   */
  onWake(fn: () => void): () => void;
  /**
   * How far this process's clock is ahead of the database's (negative:
   * behind), in ms, measured over one round trip. Leases are written from
   * each worker's clock, and a taker judges another's lease with a 1 s
   * margin: check this at start-up and refuse to run far off.
   * @example if (Math.abs(await store.clockSkewMs()) > 500) throw new Error('fix NTP on this host')
   */
  clockSkewMs(): Promise<number>;
  /** Ends the listening connection, and the pool when the store created it. */
  close(): Promise<void>;
}

/**
 * @example
 * import { postgresStore } from 'oncely/postgres';
 * const store = postgresStore({ connectionString: process.env.DATABASE_URL });
 * const client = createClient({ store, concurrency: 16 });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const { tenant, names, now, ...resolved } = validateOptions(options);
  const owned = options.pool === undefined;
  const pool: Pool =
    options.pool ?? new (loadPg().Pool)({ connectionString: options.connectionString, max: options.poolSize ?? 10 });
  // A pool we own must not crash the process when an idle connection dies (the server restarted).
  if (owned) pool.on('error', () => undefined);
  const table = names.table;
  const cache = new RecordCache();
  const listeners = new Set<(entry: QuarantineEntry) => void>();
  const wake = wakeChannel(pool, names.channel, tenant);
  const sql = {
    get: `SELECT ${READ_COLUMNS} FROM ${table} WHERE tenant = $1 AND key = $2`,
    insert: insertSql(names),
    update: updateSql(names),
    put: upsertSql(names),
    delete: `DELETE FROM ${table} WHERE tenant = $1 AND key = $2`,
    // Moves the row aside only if it is still the text we judged (rev): a concurrent repair is not quarantined.
    quarantine: `WITH moved AS (DELETE FROM ${table} WHERE tenant = $1 AND key = $2 AND rev = $3 RETURNING record::text AS raw)
      INSERT INTO ${names.quarantine} (tenant, id, problems, at, raw) SELECT $1, $2, $4::jsonb, $5, raw FROM moved
      ON CONFLICT (tenant, id) DO UPDATE SET problems = excluded.problems, at = excluded.at, raw = excluded.raw, moved_at = now()
      RETURNING raw`,
    quarantined: `SELECT id, problems, at, raw FROM ${names.quarantine} WHERE tenant = $1 ORDER BY moved_at, id`,
  };

  let ready: Promise<unknown> | undefined;
  /** Migrates once per handle before first use (unless told not to); a failure is retried on the next call. */
  function whenReady(): Promise<unknown> {
    if (!resolved.migrate) return Promise.resolve();
    ready ??= migrate(pool, names).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  /** A row's record, or undefined when there is none or it was corrupt (then moved aside and reported). */
  async function judge(key: string, row: StoredRow): Promise<OperationRecord | undefined> {
    const checked: Checked = checkRow(key, row.raw);
    if (checked.ok) return checked.record;
    cache.forget(key);
    const at = now();
    const moved = await pool.query<{ raw: string }>(sql.quarantine, [
      tenant,
      key,
      row.rev,
      JSON.stringify(checked.problems),
      at,
    ]);
    const first = moved.rows[0];
    if (first !== undefined) {
      const entry: QuarantineEntry = { id: key, problems: checked.problems, at, raw: first.raw };
      for (const fn of [...listeners]) fn(entry);
    }
    return undefined;
  }

  async function read(key: string): Promise<{ row: StoredRow | undefined; record: OperationRecord | undefined }> {
    const { rows } = await pool.query<StoredRow>(sql.get, [tenant, key]);
    const row = rows[0];
    if (row === undefined) return { row: undefined, record: undefined };
    const record = await judge(key, row);
    return record === undefined ? { row: undefined, record: undefined } : { row, record };
  }

  /** Writes `next` over the row version read (or inserts when there was none); false when someone wrote first. */
  async function write(key: string, row: StoredRow | undefined, next: OperationRecord): Promise<StoredRow | undefined> {
    const values = columnValues(next);
    const result =
      row === undefined
        ? await pool.query<Omit<StoredRow, 'raw'>>(sql.insert, [tenant, key, ...values])
        : await pool.query<Omit<StoredRow, 'raw'>>(sql.update, [tenant, key, row.rev, row.epoch, ...values]);
    const written = result.rows[0];
    return written === undefined ? undefined : { ...written, raw: values[values.length - 1] as string };
  }

  /** One compare-and-set try on a known row version; `undefined` when the updater must see a fresh read. */
  async function tryCached(key: string, fn: Updater): Promise<{ record: OperationRecord | undefined } | undefined> {
    const known = cache.get(key);
    if (known === undefined) return undefined;
    let next: OperationRecord | undefined;
    try {
      next = fn(known.record);
    } catch {
      // It may have refused what it saw only because our copy is old: decide again on a fresh read.
      return undefined;
    }
    // Writing nothing is only right on the current record, which our copy may not be.
    if (next === undefined || next === known.record) return undefined;
    const valid = checkedNext(key, next);
    const written = await write(key, known.row, valid);
    if (written === undefined) {
      cache.forget(key);
      return undefined;
    }
    cache.remember(key, written, valid);
    return { record: valid };
  }

  function checkedNext(key: string, next: OperationRecord): OperationRecord {
    if (next.key !== key) throw new Error(`update of ${key} returned a record for ${next.key}`);
    return validForWrite(next);
  }

  const store: PostgresStore = {
    async get(key) {
      await whenReady();
      return (await read(key)).record;
    },

    async put(record) {
      await whenReady();
      const valid = validForWrite(record);
      const values = columnValues(valid);
      const { rows } = await pool.query<Omit<StoredRow, 'raw'>>(sql.put, [tenant, valid.key, ...values]);
      const written = rows[0];
      if (written !== undefined)
        cache.remember(valid.key, { ...written, raw: values[values.length - 1] as string }, valid);
    },

    async update(key: string, fn: Updater) {
      await whenReady();
      const fast = await tryCached(key, fn);
      if (fast !== undefined) return fast.record;
      for (;;) {
        const { row, record: current } = await read(key);
        const next = fn(current);
        if (next === current || next === undefined) {
          if (row !== undefined && current !== undefined) cache.remember(key, row, current);
          return current;
        }
        const valid = checkedNext(key, next);
        const written = await write(key, row, valid);
        if (written !== undefined) {
          cache.remember(key, written, valid);
          return valid;
        }
        // Someone wrote between our read and our write: read again, decide again.
      }
    },

    async delete(key) {
      await whenReady();
      cache.forget(key);
      await pool.query(sql.delete, [tenant, key]);
    },

    async list(filter?: RecordFilter) {
      await whenReady();
      const { where, values } = filterSql(filter);
      for (;;) {
        const { rows } = await pool.query<StoredRow & { key: string }>(
          `SELECT key, ${READ_COLUMNS} FROM ${table} ${where}`,
          [tenant, ...values],
        );
        const records: OperationRecord[] = [];
        let movedAside = false;
        for (const row of rows) {
          const record = await judge(row.key, row);
          if (record === undefined) movedAside = true;
          else records.push(record);
        }
        // A corrupt row took a place under the limit: list again without it.
        if (!movedAside || filter?.limit === undefined) return records;
      }
    },

    async listSummaries(filter?: RecordFilter) {
      await whenReady();
      const source = {
        table,
        tenant,
        query: async <T>(text: string, values: unknown[]) => (await pool.query(text, values)).rows as T[],
        read: async (key: string) => (await read(key)).record,
      };
      return listSummaries(source, filter);
    },

    async quarantined() {
      await whenReady();
      const { rows } = await pool.query<{ id: string; problems: string[]; at: number; raw: string }>(sql.quarantined, [
        tenant,
      ]);
      return rows.map((r) => ({ id: r.id, problems: r.problems, at: r.at, raw: r.raw }));
    },

    onQuarantine(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    migrate: () => migrate(pool, names),

    onWake: (fn) => wake.subscribe(fn),

    async clockSkewMs() {
      const sent = Date.now();
      const { rows } = await pool.query<{ ms: number }>(
        'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
      );
      const received = Date.now();
      // The database read its clock somewhere in the round trip: assume the middle.
      return (sent + received) / 2 - (rows[0]?.ms ?? Number.NaN);
    },

    async close() {
      await wake.close();
      if (owned) await pool.end();
    },
  };
  return store;
}
