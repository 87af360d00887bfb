/**
 * The browser store: one IndexedDB database per store name. This file is
 * the store object; its parts, each with its reasons:
 *
 * - indexeddb/connection.ts: opening (through idb-keyval), reopening when
 *   Safari closes the connection under us, yielding to another tab's upgrade;
 * - indexeddb/write.ts: every write in ONE strict-durability readwrite
 *   transaction; `update` reads, calls `fn` and writes in it, atomically
 *   across tabs;
 * - indexeddb/codec.ts: records kept as JSON text, validated on every read;
 * - indexeddb/quarantine.ts: a record that fails validation is moved aside,
 *   never deleted, and every other record keeps working;
 * - indexeddb/layout.ts: one object store, string keys (`INDEXEDDB_LAYOUT`).
 */

import { withRecordValidator } from '../model/parse.js';
import type { OperationRecord } from '../model.js';
import { decode, encode } from './indexeddb/codec.js';
import { Connection, requested } from './indexeddb/connection.js';
import { INDEXEDDB_LAYOUT, prefixRange } from './indexeddb/layout.js';
import { Quarantine, toQuarantineEntry } from './indexeddb/quarantine.js';
import { type WriteTx, write } from './indexeddb/write.js';
import type { OperationStore, QuarantineEntry, RecordFilter, Updater } from './store.js';
import { applyFilter } from './store.js';

export { INDEXEDDB_LAYOUT } from './indexeddb/layout.js';

export interface IndexedDbStoreOptions {
  /**
   * Database name. Give each app (or each signed-in user) its own; the
   * database must be dedicated to oncely.
   * @default 'oncely'
   */
  name?: string;
  /** Clock for quarantine timestamps. @default Date.now */
  now?: () => number;
}

export interface IndexedDbStore extends OperationStore {
  /** The database name. */
  readonly name: string;
  /** Closes the connection; later calls reject. */
  close(): Promise<void>;
}

const { recordPrefix: RECORD, quarantinePrefix: QUARANTINE } = INDEXEDDB_LAYOUT;

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * @example
 * import { createClient, indexedDbStore } from 'oncely/browser';
 * const client = createClient({ store: indexedDbStore({ name: 'shop-payments' }) });
 */
export function indexedDbStore(options: IndexedDbStoreOptions = {}): IndexedDbStore {
  const name = options.name ?? 'oncely';
  const connection = new Connection(name);
  const quarantine = new Quarantine(options.now ?? Date.now);
  const transact = connection.transact.bind(connection);
  const writeTx = <T>(work: (tx: WriteTx<T>) => void): Promise<T> =>
    write(connection, (moved) => quarantine.announce(moved), work);

  /** Moves the still-corrupt records among `keys` aside; returns those that turned valid meanwhile. */
  function moveAside(keys: readonly string[]): Promise<Map<string, OperationRecord>> {
    return writeTx<Map<string, OperationRecord>>((tx) => {
      const healthy = new Map<string, OperationRecord>();
      tx.finish(healthy);
      for (const key of keys) {
        tx.onRead(tx.store.get(`${RECORD}${key}`), (value) => {
          const record = quarantine.readInTx(tx.store, key, value, tx.moved);
          if (record !== undefined) healthy.set(key, record);
        });
      }
    });
  }

  const store: IndexedDbStore = {
    name,

    // Each call that reads or writes a record runs under `withRecordValidator`: one that meets a record
    // needing the validator before it is loaded aborts, loads it and runs again (model/parse.ts).
    get: (key) =>
      withRecordValidator(async () => {
        const value = await transact('readonly', (s) => requested(s.get(`${RECORD}${key}`)));
        if (value === undefined) return undefined;
        const decoded = decode(key, value);
        if (decoded.ok) return decoded.record;
        return (await moveAside([key])).get(key);
      }),

    put: (record) =>
      withRecordValidator(async () => {
        const { text } = encode(record);
        await writeTx<void>((tx) => {
          tx.store.put(text, `${RECORD}${record.key}`);
          tx.finish();
        });
      }),

    update: (key: string, fn: Updater) =>
      withRecordValidator(() =>
        writeTx<OperationRecord | undefined>((tx) => {
          tx.onRead(tx.store.get(`${RECORD}${key}`), (value) => {
            const current = quarantine.readInTx(tx.store, key, value, tx.moved);
            const next = fn(current);
            if (isThenable(next)) throw new TypeError('update(): the change function must be synchronous');
            if (next === current || next === undefined) {
              tx.finish(current);
              return;
            }
            if (next.key !== key) throw new Error(`update of ${key} returned a record for ${next.key}`);
            const { text, stored } = encode(next);
            tx.store.put(text, `${RECORD}${key}`);
            tx.finish(stored);
          });
        }),
      ),

    delete: (key, options) =>
      withRecordValidator(() => {
        const onlyIf = options?.onlyIf;
        return writeTx<void>((tx) => {
          if (onlyIf === undefined) {
            tx.store.delete(`${RECORD}${key}`);
            tx.finish();
            return;
          }
          // Judged and deleted in one transaction: nothing can change the record in between.
          tx.onRead(tx.store.get(`${RECORD}${key}`), (value) => {
            const current = quarantine.readInTx(tx.store, key, value, tx.moved);
            if (current !== undefined && onlyIf(current)) tx.store.delete(`${RECORD}${key}`);
            tx.finish();
          });
        });
      }),

    list: (filter?: RecordFilter) =>
      withRecordValidator(async () => {
        const range = prefixRange(RECORD);
        const [keys, values] = await transact('readonly', (s) =>
          Promise.all([requested(s.getAllKeys(range)), requested(s.getAll(range))]),
        );
        const records: OperationRecord[] = [];
        const corrupt: string[] = [];
        keys.forEach((storedKey, i) => {
          const key = String(storedKey).slice(RECORD.length);
          const decoded = decode(key, values[i]);
          if (decoded.ok) records.push(decoded.record);
          else corrupt.push(key);
        });
        if (corrupt.length > 0) records.push(...(await moveAside(corrupt)).values());
        return applyFilter(records, filter);
      }),

    async quarantined() {
      const values = await transact('readonly', (s) => requested(s.getAll(prefixRange(QUARANTINE))));
      const entries: QuarantineEntry[] = [];
      for (const value of values) {
        const entry = toQuarantineEntry(value);
        if (entry !== undefined) entries.push(entry);
      }
      return entries.sort((a, b) => a.at - b.at);
    },

    onQuarantine: (fn) => quarantine.onQuarantine(fn),

    async close() {
      connection.close();
    },
  };
  return store;
}
