/**
 * The row version and record this handle last wrote or read, per key: with
 * it, the next `update` of that key can try its compare-and-set at once (one
 * round trip) instead of reading first. A stale entry costs one refused
 * write and a fresh read, never a wrong write: the `UPDATE` only applies to
 * the exact row version cached. Bounded: the oldest entries are dropped.
 *
 * The record is kept validated and frozen all the way down (as the file
 * and memory stores keep theirs), so it is handed to updaters as it is:
 * parsing the row's text again at each use cost a fleet worker more CPU
 * per operation than any other step of the store's own.
 */
import type { OperationRecord } from '../../model.js';
import type { StoredRow } from './rows.js';

/** Enough for every operation a worker has in flight, and then some. */
const MAX_ENTRIES = 4_096;

export interface Cached {
  /** The row version as read or written; its `raw` is the document's text as the database holds it. */
  row: StoredRow;
  /** That text's record, validated and frozen (`forWrite`, or a judged read frozen in place). */
  record: OperationRecord;
}

export class RecordCache {
  readonly #entries = new Map<string, Cached>();

  get(key: string): Cached | undefined {
    return this.#entries.get(key);
  }

  remember(key: string, row: StoredRow, record: OperationRecord): void {
    this.#entries.delete(key);
    this.#entries.set(key, { row, record });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}
