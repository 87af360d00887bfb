/**
 * The IndexedDB store's quarantine: a record that fails validation is
 * moved aside under the quarantine prefix in the same readwrite
 * transaction that found it (never deleted), reported to the
 * `onQuarantine` listeners of the handle that moved it once the
 * transaction commits, and listed by `quarantined()` from any handle.
 * Every other record keeps working.
 */
import type { OperationRecord } from '../../model.js';
import type { QuarantineEntry } from '../store.js';
import { decode, rawText } from './codec.js';
import { INDEXEDDB_LAYOUT } from './layout.js';

const { recordPrefix: RECORD, quarantinePrefix: QUARANTINE } = INDEXEDDB_LAYOUT;

export class Quarantine {
  readonly #listeners = new Set<(entry: QuarantineEntry) => void>();
  readonly #now: () => number;
  #sequence = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * Inside a readwrite transaction: validates `value` stored for `key`; a
   * corrupt one is moved to quarantine (same transaction), added to
   * `moved`, and yields undefined.
   */
  readInTx(store: IDBObjectStore, key: string, value: unknown, moved: QuarantineEntry[]): OperationRecord | undefined {
    if (value === undefined) return undefined;
    const decoded = decode(key, value);
    if (decoded.ok) return decoded.record;
    const entry: QuarantineEntry = { id: key, problems: decoded.problems, at: this.#now(), raw: decoded.raw };
    const suffix = `${entry.at.toString(36)}.${(this.#sequence++).toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
    store.put(entry, `${QUARANTINE}${key}\u0000${suffix}`);
    store.delete(`${RECORD}${key}`);
    moved.push(entry);
    return undefined;
  }

  /** Reports entries moved by a committed transaction to this handle's listeners. */
  announce(moved: readonly QuarantineEntry[]): void {
    for (const entry of moved) {
      for (const fn of [...this.#listeners]) {
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

  onQuarantine(fn: (entry: QuarantineEntry) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }
}

/** A stored quarantine entry as read back, or undefined for what is not one. */
export function toQuarantineEntry(value: unknown): QuarantineEntry | undefined {
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
