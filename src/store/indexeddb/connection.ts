/**
 * The IndexedDB store's connection, and the one way to open a transaction
 * on it. Opened through idb-keyval's `createStore` (which also creates the
 * object store on first use); we keep its connection and open our own
 * transactions, so that writes can ask for strict durability (idb-keyval's
 * helpers cannot pass transaction options).
 *
 * Safari sometimes closes a connection under us; `transaction()` then
 * throws `InvalidStateError` ("The database connection is closing"). We
 * reopen once and try again; a second failure is reported to the caller.
 * A `versionchange` from another tab (upgrade or delete) closes our
 * connection at once so that tab is not blocked; the next call reopens.
 */
import { createStore, type UseStore } from 'idb-keyval';
import { INDEXEDDB_LAYOUT } from './layout.js';

const OBJECT_STORE = INDEXEDDB_LAYOUT.objectStore;

function errorName(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { name?: unknown }).name : undefined;
}

/** Resolves with a read request's result, or rejects with its error. */
export function requested<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

export class Connection {
  readonly name: string;
  #use: UseStore | undefined;
  #connection: Promise<IDBDatabase> | undefined;
  #database: IDBDatabase | undefined;
  #closed = false;

  constructor(name: string) {
    this.name = name;
  }

  /**
   * Opens one transaction and hands its object store to `body`, synchronously.
   * Reopens the connection once when it was closing under us.
   */
  async transact<T>(
    mode: IDBTransactionMode,
    body: (store: IDBObjectStore, tx: IDBTransaction) => Promise<T>,
  ): Promise<T> {
    for (let reopened = false; ; reopened = true) {
      if (this.#closed) throw this.#closedError();
      let db: IDBDatabase | undefined;
      let tx: IDBTransaction;
      try {
        db = await this.#connect();
        if (this.#closed) throw this.#closedError();
        tx = db.transaction(OBJECT_STORE, mode, mode === 'readwrite' ? { durability: 'strict' } : undefined);
      } catch (error) {
        // InvalidStateError from transaction() means "the connection is closing" (Safari does this unasked).
        if (reopened || this.#closed || errorName(error) !== 'InvalidStateError') throw error;
        // Only the connection that failed is dropped: a concurrent call may already have reopened.
        if (db !== undefined) this.#forget(db);
        continue;
      }
      return body(tx.objectStore(OBJECT_STORE), tx);
    }
  }

  /** Closes the connection; later calls reject. */
  close(): void {
    this.#closed = true;
    this.#forget();
  }

  /** Forgets (and closes) the connection, if `db` is still the current one, so the next call opens anew. */
  #forget(db?: IDBDatabase): void {
    if (db !== undefined && db !== this.#database) return;
    this.#database?.close();
    this.#database = undefined;
    this.#connection = undefined;
    this.#use = undefined;
  }

  #connect(): Promise<IDBDatabase> {
    if (this.#connection !== undefined) return this.#connection;
    if (typeof indexedDB === 'undefined') {
      return Promise.reject(new Error('IndexedDB is not available here; use memoryStore() or the file store instead'));
    }
    this.#use ??= createStore(this.name, OBJECT_STORE);
    const opening = this.#use('readonly', (store) => store.transaction.db).then(
      (db) => {
        this.#database = db;
        db.addEventListener('versionchange', () => this.#forget(db));
        db.addEventListener('close', () => this.#forget(db));
        return db;
      },
      (error: unknown) => {
        // Start from a fresh idb-keyval store next time (its cached connection may be the closing one).
        if (this.#connection === opening) {
          this.#connection = undefined;
          this.#use = undefined;
        }
        throw error;
      },
    );
    this.#connection = opening;
    return opening;
  }

  #closedError(): Error {
    return new Error(`indexedDbStore "${this.name}" is closed`);
  }
}
