/**
 * The in-memory store: for tests, short-lived scripts and as the reference
 * implementation of the contract. Records are kept as JSON text and parsed
 * and validated on every read, exactly like the durable stores, so callers
 * can never mutate stored state by reference and a test that passes here
 * exercises the same validation path.
 */

import { CorruptRecordError } from '../errors.js';
import type { OperationRecord } from '../flow/record.js';
import { parseRecord } from '../flow/record.js';
import type { OperationStore, QuarantineEntry, RecordFilter, Updater } from './store.js';
import { applyFilter } from './store.js';

export interface MemoryStoreOptions {
  /** Clock for quarantine timestamps. @default Date.now */
  now?: () => number;
}

export interface MemoryStore extends OperationStore {
  /** Test hook: replace a record's stored text with anything (to prove quarantine). */
  corrupt(key: string, text: string): void;
}

/**
 * @example
 * const client = createClient({ store: memoryStore() });
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const now = options.now ?? Date.now;
  const texts = new Map<string, string>();
  const quarantine = new Map<string, QuarantineEntry>();
  const listeners = new Set<(entry: QuarantineEntry) => void>();

  function read(key: string): OperationRecord | undefined {
    const text = texts.get(key);
    if (text === undefined) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      moveAside(key, text, [`not JSON: ${(error as Error).message}`]);
      return undefined;
    }
    const parsed = parseRecord(raw);
    if (!parsed.ok) {
      moveAside(key, text, parsed.problems);
      return undefined;
    }
    if (parsed.record.key !== key) {
      moveAside(key, text, [`stored under ${key} but names ${parsed.record.key}`]);
      return undefined;
    }
    return parsed.record;
  }

  function moveAside(key: string, raw: string, problems: string[]): void {
    texts.delete(key);
    const entry: QuarantineEntry = { id: key, problems, at: now(), raw };
    quarantine.set(key, entry);
    for (const fn of [...listeners]) fn(entry);
  }

  /** Refuses to store what it could not read back: an invalid record is a bug, not data. */
  function write(record: OperationRecord): void {
    const parsed = parseRecord(record);
    if (!parsed.ok) throw new CorruptRecordError(record.key, `refusing to write: ${parsed.problems.join('; ')}`);
    texts.set(record.key, JSON.stringify(record));
  }

  return {
    async get(key) {
      return read(key);
    },
    async put(record) {
      write(record);
    },
    async update(key: string, fn: Updater) {
      // Single-threaded: read, change and write happen in one synchronous turn.
      const current = read(key);
      const next = fn(current);
      if (next === current || next === undefined) return current;
      if (next.key !== key) throw new Error(`update of ${key} returned a record for ${next.key}`);
      write(next);
      return read(key);
    },
    async delete(key) {
      texts.delete(key);
    },
    async list(filter?: RecordFilter) {
      const records: OperationRecord[] = [];
      for (const key of [...texts.keys()]) {
        const record = read(key);
        if (record !== undefined) records.push(record);
      }
      return applyFilter(records, filter);
    },
    async quarantined() {
      return [...quarantine.values()];
    },
    onQuarantine(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    corrupt(key, text) {
      texts.set(key, text);
    },
  };
}
