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
 * wrote last still cached, a write is one round trip. Writes the engine
 * marks `relaxed`, and claims, commit without waiting for the disk (pools.ts).
 */
import type { Pool } from 'pg';
import { type OperationRecord, writeOrder } from '../../model.js';
import type { QuarantineEntry, RecordFilter, Updater, WriteOptions } from '../store.js';
import { RecordCache } from './cache.js';
import { claimValues } from './claim.js';
import { clockSkewMs } from './clock.js';
import type { PostgresStore } from './handle.js';
import { migrate } from './migrations.js';
import { type PostgresStoreOptions, validateOptions } from './options.js';
import { openPools } from './pools.js';
import {
  type Checked,
  checkRow,
  columnValues,
  filterSql,
  forWrite,
  jsonText,
  leaseLeftMs,
  READ_COLUMNS,
  type StoredRow,
} from './rows.js';
import { deepFreeze, Snapshots } from './snapshots.js';
import { statements } from './statements.js';
import { listSummaries } from './summaries.js';
import { ownConnection, wakeChannel } from './wake.js';

export type { PostgresStore } from './handle.js';
export type { PostgresStoreOptions } from './options.js';

/**
 * @example
 * import { postgresStore } from 'oncely/postgres';
 * const store = postgresStore({ connectionString: process.env.DATABASE_URL });
 * const client = createClient({ store, concurrency: 16 });
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const { tenant, names, now, connectionTimeoutMs, preparedStatements, ...resolved } = validateOptions(options);
  const pools = openPools(options, connectionTimeoutMs);
  const pool = pools.durable;
  const table = names.table;
  const cache = new RecordCache();
  const snapshots = new Snapshots();
  const listeners = new Set<(entry: QuarantineEntry) => void>();
  const wake = wakeChannel(ownConnection(pool, connectionTimeoutMs), names.channel, tenant);
  const sql = statements(names, preparedStatements);

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

  /**
   * A row's record, or undefined when it was corrupt (then moved aside and reported); with the row as the
   * cache keeps it (its text the record's: the stored text unless the record is a clean copy of it).
   */
  async function judge(key: string, row: StoredRow): Promise<{ record: OperationRecord; row: StoredRow } | undefined> {
    const checked: Checked = checkRow(key, row, snapshots);
    if (checked.ok)
      return { record: checked.record, row: checked.exact ? row : { ...row, raw: jsonText(checked.record) } };
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

  /** `frozen`: the record is frozen in place (it is ours, a fresh parse), for the cache and an updater. */
  async function read(
    key: string,
    frozen = false,
  ): Promise<{ row: StoredRow | undefined; record: OperationRecord | undefined }> {
    const { rows } = await pool.query<StoredRow>({ ...sql.get, values: [tenant, key] });
    const row = rows[0];
    if (row === undefined) return { row: undefined, record: undefined };
    const judged = await judge(key, row);
    if (judged === undefined) return { row: undefined, record: undefined };
    return frozen ? { row: judged.row, record: deepFreeze(judged.record) } : judged;
  }

  /**
   * Writes `next`, computed from `from` (the frozen record of `row`, if any), over the row version read (or
   * inserts when there was none) and remembers it; the record as a read returns it, or undefined when
   * someone wrote first.
   */
  async function write(
    key: string,
    row: StoredRow | undefined,
    next: OperationRecord,
    from: OperationRecord | undefined,
    via: Pool,
  ): Promise<OperationRecord | undefined> {
    if (next.key !== key) throw new Error(`update of ${key} returned a record for ${next.key}`);
    const { text, record } = forWrite(next, from, snapshots);
    const values = columnValues(record, text);
    const result =
      row === undefined
        ? await via.query<Omit<StoredRow, 'raw'>>({
            ...sql.insert,
            values: [tenant, key, ...values, leaseLeftMs(record, now())],
          })
        : await via.query<Omit<StoredRow, 'raw'>>({
            ...sql.update,
            values: [tenant, key, row.rev, row.epoch, ...values, leaseLeftMs(record, now())],
          });
    const written = result.rows[0];
    if (written === undefined) return undefined;
    cache.remember(key, { ...written, raw: text }, record);
    return record;
  }

  /** One compare-and-set try on a known row version; `undefined` when the updater must see a fresh read. */
  async function tryCached(
    key: string,
    fn: Updater,
    via: Pool,
  ): Promise<{ record: OperationRecord | undefined } | undefined> {
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
    const written = await write(key, known.row, next, known.record, via);
    if (written === undefined) {
      cache.forget(key);
      return undefined;
    }
    return { record: written };
  }

  const store: PostgresStore = {
    async get(key) {
      await whenReady();
      return (await read(key)).record;
    },

    async put(record) {
      await whenReady();
      const { text, record: valid } = forWrite(record);
      const values = columnValues(valid, text);
      const { rows } = await pool.query<Omit<StoredRow, 'raw'>>(sql.put, [
        tenant,
        valid.key,
        ...values,
        leaseLeftMs(valid, now()),
      ]);
      const written = rows[0];
      if (written !== undefined) cache.remember(valid.key, { ...written, raw: text }, valid);
    },

    async update(key: string, fn: Updater, options?: WriteOptions) {
      await whenReady();
      const via = options?.durability === 'relaxed' ? pools.relaxed : pool;
      const fast = await tryCached(key, fn, via);
      if (fast !== undefined) return fast.record;
      for (;;) {
        const { row, record: current } = await read(key, true);
        const next = fn(current);
        if (next === current || next === undefined) {
          if (row !== undefined && current !== undefined) cache.remember(key, row, current);
          return current;
        }
        const written = await write(key, row, next, current, via);
        if (written !== undefined) return written;
        // Someone wrote between our read and our write: read again, decide again.
      }
    },

    async delete(key, options) {
      await whenReady();
      cache.forget(key);
      const onlyIf = options?.onlyIf;
      if (onlyIf === undefined) return void (await pool.query(sql.delete, [tenant, key]));
      // Only the row version judged is deleted; a write in between means judge again.
      for (;;) {
        const { row, record } = await read(key);
        if (row === undefined || record === undefined || !onlyIf(record)) return;
        if ((await pool.query(`${sql.delete} AND rev = $3`, [tenant, key, row.rev])).rowCount) return;
      }
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
          const judged = await judge(row.key, row);
          if (judged === undefined) movedAside = true;
          else records.push(judged.record);
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

    clockSkewMs: () => clockSkewMs(pool, now),

    async claimDue(request) {
      await whenReady();
      const statement = request.keys === undefined ? sql.claim : sql.claimKeys;
      // A claim alone commits without waiting for the disk (pools.ts): the claimer's next write is durable and
      // covers it. One that starts attempts is that durable write: it must be on disk before a request leaves.
      const via = request.startFirstAttempt === true ? pool : pools.relaxed;
      const { rows } = await via.query<StoredRow & { key: string }>({
        ...statement,
        values: claimValues(tenant, request),
      });
      const claimed: OperationRecord[] = [];
      for (const row of rows) {
        // Checked like any read: a corrupt row, or one whose columns disagree with it, is moved aside.
        const judged = await judge(row.key, row);
        if (judged === undefined) continue;
        // A fresh parse of our own: frozen in place, then both handed out and kept for the claimer's next write.
        const record = deepFreeze(judged.record);
        cache.remember(row.key, judged.row, record);
        claimed.push(record);
      }
      return claimed.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || writeOrder(a) - writeOrder(b));
    },

    async close() {
      await wake.close();
      await pools.end();
    },
  };
  return store;
}
