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

interface Entry {
  row: StoredRow;
  /** The record as validated JSON text: each use parses a copy no caller can share. */
  text: string;
}

export class RecordCache {
  readonly #entries = new Map<string, Entry>();

  get(key: string): { row: StoredRow; record: OperationRecord } | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    return { row: entry.row, record: JSON.parse(entry.text) as OperationRecord };
  }

  remember(key: string, row: StoredRow, record: OperationRecord): void {
    this.#entries.delete(key);
    this.#entries.set(key, { row, text: JSON.stringify(record) });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}
