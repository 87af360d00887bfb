/**
 * Where a client keeps each record. An operation that sends an idempotency
 * key is written ahead to the client's store: that is the guarantee. One
 * that sends no key (a `GET`, an endpoint with `sendKey: false`) gains
 * nothing from surviving a crash (there is no key for a resend to reuse)
 * and would fill the store with reads, so unless its rule or request says
 * `persist: true` it lives in this process's memory only: found by `get`
 * and joined by a second `send` of the same key while it runs, forgotten
 * once every caller that admitted it has its answer. `list()`, `resume()`
 * and `sweep()` see the stored operations only.
 *
 * The memory store comes from the platform (`memory`), made on the first
 * record kept there: the browser's client loads its code with `import()`
 * then, so a page whose first send is a keyed write never downloads it.
 * Until it is made, nothing is in memory; calls on other keys go straight
 * to the store.
 */
import type { OperationRecord } from '../../model.js';
import { forwardPackedListing } from '../../store/packed-listing.js';
import type { OperationStore, RecordFilter, RecordSummary, Updater, WriteOptions } from '../../store/store.js';

export interface PlacedStore extends OperationStore {
  /**
   * Keeps `key` in memory, not in the store, until `release` has been called
   * as many times as `hold`: once per caller waiting for its answer.
   */
  hold(key: string): void;
  /** One caller has its answer; the last one forgets the record. */
  release(key: string): void;
  /** `key` lives in memory only (see `hold`). */
  inMemory(key: string): boolean;
  /** The record of `key` in the client's store, whatever is held in memory under that key. */
  getStored(key: string): Promise<OperationRecord | undefined>;
}

/**
 * @param memory makes the memory store (validated and frozen like any stored
 *   record: the loop cannot tell the difference), on the first record held.
 *   A failed make fails that call; the next held record tries again.
 */
export function placedStore(store: OperationStore, memory: () => Promise<OperationStore>): PlacedStore {
  let made: OperationStore | undefined;
  let making: Promise<OperationStore> | undefined;
  const inMemory = (): Promise<OperationStore> =>
    (making ??= memory().then(
      (m) => (made = m),
      (error: unknown) => {
        making = undefined;
        throw error;
      },
    ));
  /** Callers still waiting for each in-memory record. */
  const holders = new Map<string, number>();
  /** `call` on the store that keeps `key`: at once, unless the memory store it needs is still being made. */
  const at = <T>(key: string, call: (where: OperationStore) => Promise<T>): Promise<T> =>
    !holders.has(key) ? call(store) : made !== undefined ? call(made) : inMemory().then(call);

  const placed: PlacedStore = {
    hold(key) {
      holders.set(key, (holders.get(key) ?? 0) + 1);
    },
    release(key) {
      const left = (holders.get(key) ?? 0) - 1;
      if (left > 0) {
        holders.set(key, left);
        return;
      }
      holders.delete(key);
      // The memory store deletes synchronously; its promise cannot reject. (Not made yet: nothing was kept.)
      void made?.delete(key);
    },
    inMemory: (key) => holders.has(key),
    getStored: (key) => store.get(key),
    get: (key) => at(key, (where) => where.get(key)),
    put: (record: OperationRecord, options?: WriteOptions) => at(record.key, (where) => where.put(record, options)),
    update: (key: string, fn: Updater, options?: WriteOptions) => at(key, (where) => where.update(key, fn, options)),
    delete: (key, options) => at(key, (where) => where.delete(key, options)),
    list: (filter?: RecordFilter) => store.list(filter),
    quarantined: () => store.quarantined(),
    onQuarantine: (fn) => store.onQuarantine(fn),
  };
  const listSummaries = store.listSummaries?.bind(store);
  if (listSummaries !== undefined) {
    placed.listSummaries = (filter?: RecordFilter): Promise<RecordSummary[]> => listSummaries(filter);
  }
  // Claims in the store, on its clock: memory-only records are never claimable elsewhere, nor here.
  const claimDue = store.claimDue?.bind(store);
  if (claimDue !== undefined) placed.claimDue = claimDue;
  const close = store.close?.bind(store);
  if (close !== undefined) placed.close = close;
  // The store's packed listing (a file store's: resume passes list through it), as listSummaries is passed on.
  forwardPackedListing(store, placed);
  return placed;
}
