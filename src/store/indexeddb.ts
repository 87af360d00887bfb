/**
 * The browser store: one IndexedDB database per store name, opened through
 * idb-keyval's `createStore` (which also creates the object store on first
 * use). Records are kept as JSON text, parsed and validated with
 * `parseRecord` on every read, like every other store.
 *
 * Why each choice:
 * - Every write runs in ONE readwrite transaction that we open ourselves
 *   (idb-keyval's own helpers cannot pass options), with
 *   `durability: 'strict'`: the promise resolves on the transaction's
 *   `complete` event, and with a strict hint that means "flushed", not
 *   "handed to the OS". Browsers without the hint ignore the option.
 * - `update` reads, calls `fn` synchronously and writes in the same
 *   transaction, with nothing awaited in between (an await outside an IDB
 *   request callback lets the transaction auto-commit). IndexedDB serialises
 *   readwrite transactions over the same object store across every
 *   connection of the origin, so the read-modify-write is atomic across tabs.
 * - A record that fails validation is moved aside under the quarantine
 *   prefix in one readwrite transaction (never deleted), reported to
 *   `onQuarantine` listeners of the handle that moved it, and listed by
 *   `quarantined()` from any handle. Every other record keeps working.
 * - Safari sometimes closes a connection under us; `transaction()` then
 *   throws `InvalidStateError` ("The database connection is closing"). We
 *   reopen once and try again; a second failure is reported to the caller.
 *   A `versionchange` from another tab (upgrade or delete) closes our
 *   connection at once so that tab is not blocked; the next call reopens.
 *
 * Layout (one object store, string keys): see `INDEXEDDB_LAYOUT`.
 */
import { createStore, type UseStore } from 'idb-keyval';
import { CorruptRecordError } from '../errors.js';
import type { OperationRecord } from '../model.js';
import { parseRecord } from '../model.js';
import type { OperationStore, QuarantineEntry, RecordFilter, Updater } from './store.js';
import { applyFilter } from './store.js';

/**
 * How the store lays out its database. Stable: devtools, migrations and
 * tests that write raw bytes rely on it.
 */
export const INDEXEDDB_LAYOUT = {
  /** The only object store in the database. */
  objectStore: 'operations',
  /** A record is stored as JSON text under `recordPrefix + key`. */
  recordPrefix: 'r:',
  /** A quarantine entry is stored as a plain object under `quarantinePrefix + key + '\u0000' + suffix`. */
  quarantinePrefix: 'q:',
} as const;

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

/** What a write transaction body gets: all of it runs inside one readwrite transaction. */
interface WriteTx<T> {
  store: IDBObjectStore;
  /** Entries quarantined in this transaction, reported once it commits. */
  moved: QuarantineEntry[];
  /** The value the write resolves with once committed. */
  finish: (value: T) => void;
  /** Runs `fn` on the request's success, still inside the transaction; a throw aborts it. */
  onRead: <R>(request: IDBRequest<R>, fn: (result: R) => void) => void;
}

type Decoded = { ok: true; record: OperationRecord } | { ok: false; problems: string[]; raw: string };

const { objectStore: OBJECT_STORE, recordPrefix: RECORD, quarantinePrefix: QUARANTINE } = INDEXEDDB_LAYOUT;

/** Every key that starts with `prefix` (`;` is the code unit after `:`). */
function prefixRange(prefix: string): IDBKeyRange {
  return IDBKeyRange.bound(prefix, `${prefix.slice(0, -1)};`, false, true);
}

function errorName(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
}

function rawText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Validates one stored value (JSON text, or a structured object written by something else). */
function decode(key: string, value: unknown): Decoded {
  let data: unknown = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch (error) {
      return { ok: false, problems: [`not JSON: ${(error as Error).message}`], raw: value };
    }
  }
  const parsed = parseRecord(data);
  if (!parsed.ok) return { ok: false, problems: parsed.problems, raw: rawText(value) };
  if (parsed.record.key !== key) {
    return { ok: false, problems: [`key: stored under ${key} but names ${parsed.record.key}`], raw: rawText(value) };
  }
  return parsed;
}

/** The exact text to store for `record`, and the record as it will read back. Refuses what could not be read back. */
function encode(record: OperationRecord): { text: string; stored: OperationRecord } {
  const text = JSON.stringify(record);
  const parsed = parseRecord(JSON.parse(text));
  if (!parsed.ok) {
    throw new CorruptRecordError(record.key, `refusing to write an invalid record (${parsed.problems.join('; ')})`);
  }
  return { text, stored: parsed.record };
}

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function toQuarantineEntry(value: unknown): QuarantineEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Partial<Record<keyof QuarantineEntry, unknown>>;
  if (typeof v.id !== 'string') return undefined;
  return {
    id: v.id,
    problems: Array.isArray(v.problems) ? v.problems.map(String) : [],
    at: typeof v.at === 'number' ? v.at : 0,
    raw: typeof v.raw === 'string' ? v.raw : rawText(v.raw),
  };
}

/** Resolves with a read request's result, or rejects with its error. */
function requested<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * @example
 * import { createClient, indexedDbStore } from 'oncely/browser';
 * const client = createClient({ store: indexedDbStore({ name: 'shop-payments' }) });
 */
export function indexedDbStore(options: IndexedDbStoreOptions = {}): IndexedDbStore {
  const name = options.name ?? 'oncely';
  const now = options.now ?? Date.now;
  const listeners = new Set<(entry: QuarantineEntry) => void>();
  let use: UseStore | undefined;
  let connection: Promise<IDBDatabase> | undefined;
  let database: IDBDatabase | undefined;
  let closed = false;
  let sequence = 0;

  /** Forgets (and closes) the connection, if `db` is still the current one, so the next call opens anew. */
  function forget(db?: IDBDatabase): void {
    if (db !== undefined && db !== database) return;
    database?.close();
    database = undefined;
    connection = undefined;
    use = undefined;
  }

  function connect(): Promise<IDBDatabase> {
    if (connection !== undefined) return connection;
    if (typeof indexedDB === 'undefined') {
      return Promise.reject(new Error('IndexedDB is not available here; use memoryStore() or the file store instead'));
    }
    use ??= createStore(name, OBJECT_STORE);
    // idb-keyval opens (and on first use creates) the database; we keep its connection
    // and open our own transactions on it, so that writes can ask for strict durability.
    const opening = use('readonly', (store) => store.transaction.db).then(
      (db) => {
        database = db;
        db.addEventListener('versionchange', () => forget(db));
        db.addEventListener('close', () => forget(db));
        return db;
      },
      (error: unknown) => {
        // Start from a fresh idb-keyval store next time (its cached connection may be the closing one).
        if (connection === opening) {
          connection = undefined;
          use = undefined;
        }
        throw error;
      },
    );
    connection = opening;
    return opening;
  }

  function closedError(): Error {
    return new Error(`indexedDbStore "${name}" is closed`);
  }

  /**
   * Opens one transaction and hands its object store to `body`, synchronously.
   * Reopens the connection once when it was closing under us.
   */
  async function transact<T>(
    mode: IDBTransactionMode,
    body: (store: IDBObjectStore, tx: IDBTransaction) => Promise<T>,
  ): Promise<T> {
    for (let reopened = false; ; reopened = true) {
      if (closed) throw closedError();
      let db: IDBDatabase | undefined;
      let tx: IDBTransaction;
      try {
        db = await connect();
        if (closed) throw closedError();
        tx = db.transaction(OBJECT_STORE, mode, mode === 'readwrite' ? { durability: 'strict' } : undefined);
      } catch (error) {
        // InvalidStateError from transaction() means "the connection is closing" (Safari does this unasked).
        if (reopened || closed || errorName(error) !== 'InvalidStateError') throw error;
        // Only the connection that failed is dropped: a concurrent call may already have reopened.
        if (db !== undefined) forget(db);
        continue;
      }
      return body(tx.objectStore(OBJECT_STORE), tx);
    }
  }

  /**
   * Inside a readwrite transaction: validates `value` stored for `key`; a
   * corrupt one is moved to quarantine (same transaction) and yields undefined.
   */
  function readInTx(
    store: IDBObjectStore,
    key: string,
    value: unknown,
    moved: QuarantineEntry[],
  ): OperationRecord | undefined {
    if (value === undefined) return undefined;
    const decoded = decode(key, value);
    if (decoded.ok) return decoded.record;
    const entry: QuarantineEntry = { id: key, problems: decoded.problems, at: now(), raw: decoded.raw };
    const suffix = `${entry.at.toString(36)}.${(sequence++).toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
    store.put(entry, `${QUARANTINE}${key}\u0000${suffix}`);
    store.delete(`${RECORD}${key}`);
    moved.push(entry);
    return undefined;
  }

  function announce(moved: readonly QuarantineEntry[]): void {
    for (const entry of moved) {
      for (const fn of [...listeners]) {
        try {
          fn({ ...entry, problems: [...entry.problems] });
        } catch (error) {
          // A listener's failure must not fail the store call; surface it like an event listener's.
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    }
  }

  /**
   * Runs `work` in one readwrite transaction; resolves with the value given
   * to `finish` once the transaction commits, after reporting what it
   * quarantined. A throw from `work` or from a callback wrapped by `onRead`
   * aborts the transaction (nothing changes) and rejects with that error.
   */
  function write<T>(work: (tx: WriteTx<T>) => void): Promise<T> {
    return transact<T>(
      'readwrite',
      (objectStore, tx) =>
        new Promise<T>((resolve, reject) => {
          const moved: QuarantineEntry[] = [];
          let result: { value: T } | undefined;
          let failure: { error: unknown } | undefined;
          const fail = (error: unknown): void => {
            failure ??= { error };
            try {
              tx.abort();
            } catch {
              // Already finishing: onabort or oncomplete reports.
            }
          };
          const run = (fn: () => void): void => {
            try {
              fn();
            } catch (error) {
              fail(error);
            }
          };
          tx.oncomplete = () => {
            announce(moved);
            if (result === undefined) reject(new Error('IndexedDB transaction committed without a result'));
            else resolve(result.value);
          };
          tx.onabort = () => reject(failure?.error ?? tx.error ?? new Error('IndexedDB transaction aborted'));
          run(() =>
            work({
              store: objectStore,
              moved,
              finish: (value) => {
                result = { value };
              },
              onRead: (request, fn) => {
                request.onsuccess = () => run(() => fn(request.result));
              },
            }),
          );
        }),
    );
  }

  /** Moves the still-corrupt records among `keys` aside; returns those that turned valid meanwhile. */
  function moveAside(keys: readonly string[]): Promise<Map<string, OperationRecord>> {
    return write<Map<string, OperationRecord>>((tx) => {
      const healthy = new Map<string, OperationRecord>();
      tx.finish(healthy);
      for (const key of keys) {
        tx.onRead(tx.store.get(`${RECORD}${key}`), (value) => {
          const record = readInTx(tx.store, key, value, tx.moved);
          if (record !== undefined) healthy.set(key, record);
        });
      }
    });
  }

  const store: IndexedDbStore = {
    name,

    async get(key) {
      const value = await transact('readonly', (s) => requested(s.get(`${RECORD}${key}`)));
      if (value === undefined) return undefined;
      const decoded = decode(key, value);
      if (decoded.ok) return decoded.record;
      return (await moveAside([key])).get(key);
    },

    async put(record) {
      const { text } = encode(record);
      await write<void>((tx) => {
        tx.store.put(text, `${RECORD}${record.key}`);
        tx.finish();
      });
    },

    update(key: string, fn: Updater) {
      return write<OperationRecord | undefined>((tx) => {
        tx.onRead(tx.store.get(`${RECORD}${key}`), (value) => {
          const current = readInTx(tx.store, key, value, tx.moved);
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
      });
    },

    async delete(key) {
      await write<void>((tx) => {
        tx.store.delete(`${RECORD}${key}`);
        tx.finish();
      });
    },

    async list(filter?: RecordFilter) {
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
    },

    async quarantined() {
      const values = await transact('readonly', (s) => requested(s.getAll(prefixRange(QUARANTINE))));
      const entries: QuarantineEntry[] = [];
      for (const value of values) {
        const entry = toQuarantineEntry(value);
        if (entry !== undefined) entries.push(entry);
      }
      return entries.sort((a, b) => a.at - b.at);
    },

    onQuarantine(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    async close() {
      closed = true;
      forget();
    },
  };
  return store;
}
