/**
 * The in-memory store: for tests, short-lived scripts and as the reference
 * implementation of the contract. Records are kept as JSON text and parsed
 * and validated on every read, exactly like the durable stores, so callers
 * can never mutate stored state by reference and a test that passes here
 * exercises the same validation path.
 */

import { CorruptRecordError } from '../errors.js';
import type { OperationRecord } from '../model.js';
import { parseRecord } from '../model.js';
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

interface Stored {
  text: string;
  valid: boolean;
}

/**
 * @example
 * const client = createClient({ store: memoryStore() });
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const now = options.now ?? Date.now;
  /** Each record's stored text, and whether that very text already passed validation. */
  const texts = new Map<string, Stored>();
  const quarantine = new Map<string, QuarantineEntry>();
  const listeners = new Set<(entry: QuarantineEntry) => void>();

  function read(key: string): OperationRecord | undefined {
    const stored = texts.get(key);
    if (stored === undefined) return undefined;
    // Validation is a pure function of the text, so a text that already
    // passed (every write does, see below) only needs a fresh copy: callers
    // can never reach stored state by reference. Anything else (a corrupt
    // text) goes through the full check, as in the durable stores.
    if (stored.valid) return JSON.parse(stored.text) as OperationRecord;
    const text = stored.text;
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

  /**
   * Refuses to store what it could not read back: an invalid record is a bug, not data.
   * Returns the record as a read would return it: the validated form, which
   * shares nothing with the stored text.
   */
  function write(record: OperationRecord): OperationRecord {
    const parsed = parseRecord(record);
    if (!parsed.ok) throw new CorruptRecordError(record.key, `refusing to write: ${parsed.problems.join('; ')}`);
    texts.set(record.key, { text: JSON.stringify(parsed.record), valid: true });
    return parsed.record;
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
      return write(next);
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
      texts.set(key, { text, valid: false });
    },
  };
}
