/**
 * The in-memory store: for tests, short-lived scripts and as the reference
 * implementation of the contract. Every write is validated like in the
 * durable stores; what is kept is a deep-frozen copy of the validated
 * record, handed out as is on every read: callers can never reach stored
 * state by reference (it cannot change), and a read costs no parse and no
 * copy. An update copies only what changed: the parts a transition kept from
 * the record it was given (the request, the stored policy, earlier attempts)
 * are that stored record's own frozen objects and are shared, not copied
 * again. Only a record corrupted on purpose (`corrupt`, a test hook) is kept
 * as text and goes through the full check on its next read, like a damaged
 * file.
 */

import { CorruptRecordError } from '../errors.js';
import { RECORD_SPEC } from '../model/exact.js';
import { parseStored, withRecordValidator } from '../model/parse.js';
import { exactCheck, isPlain, type Spec } from '../model/spec.js';
import type { OperationRecord } from '../model.js';
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

/** A validated record, frozen; or text that has not been validated (only `corrupt` writes that). */
type Stored = { record: OperationRecord; text?: undefined } | { text: string };

/** The record's field names, and the exact check of each (see model/exact.ts), index for index. */
const FIELDS: readonly string[] = RECORD_SPEC.kind === 'shape' ? Object.keys(RECORD_SPEC.fields) : [];
const FIELD_NAMES: ReadonlySet<string> = new Set(FIELDS);
const FIELD_CHECKS: readonly ((value: unknown) => boolean)[] = FIELDS.map((name) =>
  RECORD_SPEC.kind === 'shape' ? exactCheck(RECORD_SPEC.fields[name] as Spec) : () => false,
);

/**
 * The exact check of a whole record (`parseRecord`'s fast path), except that
 * a field holding the very value of `stored` (the record this store validated
 * and froze, which the update was given) is not checked again: it passed
 * when it was stored and cannot have changed. A transition changes a few
 * fields; the request and the stored policy are checked once per operation,
 * not on each of its writes. False sends the record through `parseRecord`.
 */
function exactUpdate(next: OperationRecord, stored: OperationRecord): boolean {
  if (!isPlain(next)) return false;
  for (const name in next) if (!FIELD_NAMES.has(name)) return false;
  // Indexed, not `for…of` over entries: no array per field on every write.
  for (let i = 0; i < FIELDS.length; i++) {
    const name = FIELDS[i] as keyof OperationRecord;
    const value = next[name];
    if (value !== stored[name] && !(FIELD_CHECKS[i] as (value: unknown) => boolean)(value)) return false;
  }
  return true;
}

/** Roots made by `frozenShared`: frozen all the way down, so any record may share them. */
const sharedRoots = new WeakSet<object>();

/**
 * A deep copy of JSON data in which every object and array is frozen.
 * Shared as they are, not copied: whatever is (at the same place) the very
 * object of `stored`, a record this store froze, and the roots made by
 * `frozenShared`. Neither can change, and copying them again was most of
 * this store's cost per request (a record's stored policy alone is some 60
 * objects and arrays), and most of what a kept record weighed.
 */
function frozenCopy<T>(value: T, stored?: unknown): T {
  if (typeof value !== 'object' || value === null || value === stored) return value;
  // `isFrozen` first: a fresh object (the common case) never costs a lookup.
  if (Object.isFrozen(value) && sharedRoots.has(value)) return value;
  const within = typeof stored === 'object' && stored !== null ? (stored as Record<string, unknown>) : undefined;
  let copy: unknown;
  if (Array.isArray(value)) {
    const from = Array.isArray(within) ? within : undefined;
    copy = value.map((item, i) => frozenCopy(item, from?.[i]));
  } else {
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      fields[key] = frozenCopy((value as Record<string, unknown>)[key], within?.[key]);
    }
    copy = fields;
  }
  return Object.freeze(copy) as T;
}

/**
 * JSON data frozen all the way down, which every memory store keeps by
 * reference instead of copying it into each record: for data many records
 * carry unchanged, such as the policy an operation was written under.
 *
 * @example
 * const snapshot = frozenShared(JSON.parse(JSON.stringify(policy)));
 */
export function frozenShared<T>(value: T): T {
  const frozen = frozenCopy(value);
  if (typeof frozen === 'object' && frozen !== null) sharedRoots.add(frozen);
  return frozen;
}

/**
 * @example
 * const client = createClient({ store: memoryStore() });
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
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
    if (current === undefined || !exactUpdate(record, current)) {
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
