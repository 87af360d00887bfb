/**
 * The records this handle validated last, each with the exact file text it
 * was read from or written as, so that the same text is not parsed and
 * validated again. An operation's writes each read its record twice (the
 * update's guess, then under the claim: records.ts), and a parse with the
 * full check was most of the CPU a shared store spent per write (a record
 * carries its policy snapshot, some 60 objects).
 *
 * Only the text decides: a hit is a file text equal, character for
 * character, to the one the record came from, and the check of a text
 * depends on nothing else (the name is part of the key). So the cache can
 * never make a corrupt file pass: another text is checked in full.
 *
 * The records kept are frozen all the way down: they are handed to updaters
 * and to callers, who must not be able to change what the next read of the
 * same text returns (the store contract allows frozen records; the memory
 * store hands out nothing else). A record this handle writes is kept as a
 * frozen copy that shares, unchanged, every part of the frozen record it was
 * computed from (its request, its policy snapshot, earlier attempts).
 *
 * At most `MAX_PARSED` records, least recently used dropped first: a bounded
 * share of memory however many records the store holds.
 */
import type { OperationRecord, ParseResult } from '../../model.js';
import { check } from './record-file.js';

/** Records kept: every operation of a large release at once (a host that came back after an outage). */
const MAX_PARSED = 256;

interface Parsed {
  text: string;
  record: OperationRecord;
}

export class ParsedRecords {
  /** In least recently used order (a Map iterates in insertion order). */
  readonly #entries = new Map<string, Parsed>();
  /** Checks answered from the cache (for tests and benchmarks). */
  hits = 0;

  /** `check(name, text)`, answered from the cache when `text` is the text last seen for `name`. */
  check(name: string, text: string): ParseResult {
    const kept = this.#entries.get(name);
    if (kept !== undefined && kept.text === text) {
      this.#entries.delete(name);
      this.#entries.set(name, kept);
      this.hits++;
      return { ok: true, record: kept.record };
    }
    const checked = check(name, text);
    if (!checked.ok) {
      this.#entries.delete(name);
      return checked;
    }
    // A fresh parse of our own: frozen in place, no copy.
    const record = frozenCopy(checked.record, undefined, true);
    this.#set(name, { text, record });
    return { ok: true, record };
  }

  /**
   * Keeps `record`, just written as file text `text`, computed from
   * `from` (a record this cache handed out, or undefined): a frozen copy
   * that shares what `from` held unchanged. Returns the copy.
   */
  remember(name: string, text: string, record: OperationRecord, from?: OperationRecord): OperationRecord {
    const frozen = frozenCopy(record, from, false);
    this.#set(name, { text, record: frozen });
    return frozen;
  }

  /** Forgets `name` (its file was removed). */
  forget(name: string): void {
    this.#entries.delete(name);
  }

  /** Records kept (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  #set(name: string, parsed: Parsed): void {
    this.#entries.delete(name);
    this.#entries.set(name, parsed);
    if (this.#entries.size > MAX_PARSED) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}

/**
 * JSON data frozen all the way down. Whatever is, at the same place, the
 * very object of `from` (frozen by this cache) is shared, not copied; with
 * `inPlace`, `value` is ours (a fresh parse) and is frozen as it is.
 * (The PostgreSQL store keeps its records the same way.)
 */
export function frozenCopy<T>(value: T, from: unknown, inPlace: boolean): T {
  if (typeof value !== 'object' || value === null || value === from) return value;
  if (inPlace) {
    for (const key of Object.keys(value)) frozenCopy((value as Record<string, unknown>)[key], undefined, true);
    return Object.freeze(value);
  }
  const within = typeof from === 'object' && from !== null ? (from as Record<string, unknown>) : undefined;
  let result: unknown;
  if (Array.isArray(value)) {
    const parts = Array.isArray(within) ? within : undefined;
    result = value.map((item, i) => frozenCopy(item, parts?.[i], false));
  } else {
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      fields[key] = frozenCopy((value as Record<string, unknown>)[key], within?.[key], false);
    }
    result = fields;
  }
  return Object.freeze(result) as T;
}
