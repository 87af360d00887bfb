/**
 * The row version and record this handle last wrote or read, per key: with
 * it, the next `update` of that key can try its compare-and-set at once (one
 * round trip) instead of reading first. A stale entry costs one refused
 * write and a fresh read, never a wrong write: the `UPDATE` only applies to
 * the exact row version cached. Bounded: the oldest entries are dropped.
 */
import type { OperationRecord } from '../../model.js';
import type { StoredRow } from './rows.js';

/** Enough for every operation a worker has in flight, and then some. */
const MAX_ENTRIES = 4_096;

export class RecordCache {
  readonly #entries = new Map<string, StoredRow>();

  /** The row and its record, parsed from the row's text at each use: a copy no caller can share. */
  get(key: string): { row: StoredRow; record: OperationRecord } | undefined {
    const row = this.#entries.get(key);
    if (row === undefined) return undefined;
    return { row, record: JSON.parse(row.raw) as OperationRecord };
  }

  /**
   * `row` as read and judged, or as written: its `raw` is the document's text as the database holds it
   * (the text a read would return, up to key order and spacing), so remembering serialises nothing.
   */
  remember(key: string, row: StoredRow): void {
    this.#entries.delete(key);
    this.#entries.set(key, row);
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}
