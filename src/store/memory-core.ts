/**
 * The in-memory store (`memoryStore`, memory.ts): for tests, short-lived
 * scripts and as the reference implementation of the contract, and where a
 * client keeps what it holds in memory only (flow/engine/placement.ts).
 * Every write is validated like in the durable stores; what is kept is a
 * deep-frozen copy of the validated record, handed out as is on every read:
 * callers can never reach stored state by reference (it cannot change), and
 * a read costs no parse and no copy. An update copies only what changed: the parts a transition kept from
 * the record it was given (the request, the stored policy, earlier attempts)
 * are that stored record's own frozen objects and are shared, not copied
 * again. Only a record corrupted on purpose (`corrupt`, a test hook) is kept
 * as text and goes through the full check on its next read, like a damaged
 * file.
 *
 * It imports only types: what it uses of the rest of oncely (the record
 * checks, the quarantine error, the frozen copies) comes in `kit`
 * (memory-kit.ts). So a browser client, whose operations live in
 * IndexedDB, loads it with `import()` only when a request is first kept in
 * memory (a read that sends no key), sharing no chunk with the client.
 */
import type { OperationRecord } from '../model.js';
import type { MemoryKit } from './memory-kit.js';
import type { OperationStore, QuarantineEntry, RecordFilter, Updater } from './store.js';

export interface MemoryStoreOptions {
  /** Clock for quarantine timestamps. @default Date.now */
  now?: () => number;
}

export interface MemoryStore extends OperationStore {
  /** Test hook: replace a record's stored text with anything (to prove quarantine). */
  corrupt(key: string, text: string): void;
}

/** A validated record, frozen; or text that has not been validated (only `corrupt` writes that). */
type Stored = { record: OperationRecord; text?: undefined } | { text: string };

/**
 * A memory store built from `kit` (memory.ts's `memoryStore` hands it the
 * one it imports).
 */
export function makeMemoryStore(kit: MemoryKit, options: MemoryStoreOptions = {}): MemoryStore {
  const { CorruptRecordError, parseStored, withRecordValidator, frozenCopy, applyFilter, isExactUpdate } = kit;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Stored>();
  const quarantine = new Map<string, QuarantineEntry>();
  const listeners = new Set<(entry: QuarantineEntry) => void>();

  function read(key: string): OperationRecord | undefined {
    const stored = entries.get(key);
    if (stored === undefined) return undefined;
    if (stored.text === undefined) return stored.record;
    const text = stored.text;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      moveAside(key, text, [`not JSON: ${(error as Error).message}`]);
      return undefined;
    }
    const parsed = parseStored(raw);
    if (!parsed.ok) {
      moveAside(key, text, parsed.problems);
      return undefined;
    }
    if (parsed.record.key !== key) {
      moveAside(key, text, [`stored under ${key} but names ${parsed.record.key}`]);
      return undefined;
    }
    const record = frozenCopy(parsed.record);
    entries.set(key, { record });
    return record;
  }

  function moveAside(key: string, raw: string, problems: string[]): void {
    entries.delete(key);
    const entry: QuarantineEntry = { id: key, problems, at: now(), raw };
    quarantine.set(key, entry);
    for (const fn of [...listeners]) fn(entry);
  }

  /**
   * Refuses to store what it could not read back: an invalid record is a bug, not data.
   * Returns the record as a read would return it: the frozen copy, which
   * shares nothing the caller could change.
   */
  function write(record: OperationRecord, current?: OperationRecord): OperationRecord {
    let valid = record;
    if (current === undefined || !isExactUpdate(record, current)) {
      const parsed = parseStored(record);
      if (!parsed.ok) throw new CorruptRecordError(record.key, `refusing to write: ${parsed.problems.join('; ')}`);
      valid = parsed.record;
    }
    const stored = frozenCopy(valid, current);
    entries.set(record.key, { record: stored });
    return stored;
  }

  return {
    // Every call that reads or writes runs under `withRecordValidator`: one that meets a record needing the
    // validator before it is loaded stops before any change, loads it and runs again (model/parse.ts).
    get: (key) => withRecordValidator(async () => read(key)),
    put: (record) =>
      withRecordValidator(async () => {
        write(record);
      }),
    update: (key: string, fn: Updater) =>
      withRecordValidator(async () => {
        // Single-threaded: read, change and write happen in one synchronous turn.
        const current = read(key);
        const next = fn(current);
        if (next === current || next === undefined) return current;
        if (next.key !== key) throw new Error(`update of ${key} returned a record for ${next.key}`);
        return write(next, current);
      }),
    delete: (key, options) =>
      withRecordValidator(async () => {
        const onlyIf = options?.onlyIf;
        if (onlyIf !== undefined) {
          const current = read(key);
          if (current === undefined || !onlyIf(current)) return;
        }
        entries.delete(key);
      }),
    list: (filter?: RecordFilter) =>
      withRecordValidator(async () => {
        const records: OperationRecord[] = [];
        for (const key of [...entries.keys()]) {
          const record = read(key);
          if (record !== undefined) records.push(record);
        }
        return applyFilter(records, filter);
      }),
    async quarantined() {
      return [...quarantine.values()];
    },
    onQuarantine(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    corrupt(key, text) {
      entries.set(key, { text });
    },
  };
}
