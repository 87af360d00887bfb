/**
 * The IndexedDB store's writes: every write runs in ONE readwrite
 * transaction with `durability: 'strict'` (see connection.ts), and
 * resolves on the transaction's `complete` event, which with a strict hint
 * means "flushed", not "handed to the OS" (browsers without the hint
 * ignore it). A read-modify-write calls its change function inside a read
 * request's callback with nothing awaited in between (an await outside an
 * IDB request callback lets the transaction auto-commit); IndexedDB
 * serialises readwrite transactions over one object store across every
 * connection of the origin, so it is atomic across tabs.
 */
import type { QuarantineEntry } from '../store.js';
import type { Connection } from './connection.js';

/** What a write transaction body gets: all of it runs inside one readwrite transaction. */
export interface WriteTx<T> {
  store: IDBObjectStore;
  /** Entries quarantined in this transaction, reported once it commits. */
  moved: QuarantineEntry[];
  /** The value the write resolves with once committed. */
  finish: (value: T) => void;
  /** Runs `fn` on the request's success, still inside the transaction; a throw aborts it. */
  onRead: <R>(request: IDBRequest<R>, fn: (result: R) => void) => void;
}

/**
 * Runs `work` in one readwrite transaction; resolves with the value given
 * to `finish` once the transaction commits, after passing what it
 * quarantined to `announce`. A throw from `work` or from a callback wrapped
 * by `onRead` aborts the transaction (nothing changes) and rejects with
 * that error.
 */
export function write<T>(
  connection: Connection,
  announce: (moved: readonly QuarantineEntry[]) => void,
  work: (tx: WriteTx<T>) => void,
): Promise<T> {
  return connection.transact<T>(
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
