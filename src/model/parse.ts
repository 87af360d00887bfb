/**
 * Reading stored data back into a record: migrate older versions, take the
 * fast exact check, else the validator decides and names the problems. Only
 * this module knows how to migrate.
 *
 * Two ways in: `parseRecord` (parse-record.ts, with the validator bundled:
 * for any store), and `parseStored` here, for the stores a browser bundles
 * with the client (memory, IndexedDB). A store's own records always pass the
 * exact check; the validator (spec-validator.ts) is needed only for a record
 * damaged or written by another version, so those stores load it with
 * `import()` the first time they meet one (`withRecordValidator`).
 */
import { isExactRecord, RECORD_SPEC } from './exact.js';
import type { OperationRecord } from './schema.js';
import { SPEC_KIT } from './spec.js';

export type ParseResult = { ok: true; record: OperationRecord } | { ok: false; problems: string[] };

/** The validator of a record: a clean copy, or one field-naming line per problem. */
export type RecordCheck = (raw: unknown) => { ok: true; value: OperationRecord } | { ok: false; problems: string[] };

/**
 * Validates (and, when older, migrates) raw stored data, asking `check` for
 * the validator only when the exact check says no. Never throws (but the
 * `ValidatorNotLoaded` of `parseStored`): a store turns `ok: false` into a
 * quarantine entry. The record returned may be `raw` itself (when it is
 * exactly a current, valid record) or a new object (a clean copy, without
 * unknown keys).
 */
export function parseWith(raw: unknown, check: () => RecordCheck): ParseResult {
  // Stored data may come from another version or a hand edit: whatever it is, the answer is a verdict,
  // never a throw that would stop every pass over the store (a deep record overflowed the stack).
  try {
    if (nestsDeeperThan(raw, MAX_RECORD_DEPTH))
      return { ok: false, problems: [`nested deeper than ${MAX_RECORD_DEPTH}`] };
    return parseValid(raw, check);
  } catch (error) {
    if (error instanceof ValidatorNotLoaded) throw error;
    return { ok: false, problems: [`unreadable: ${String(error)}`] };
  }
}

/**
 * Far deeper than any record the engine writes (a few levels, plus what
 * `meta` holds); every recursive walk after the check (validator, copies,
 * serialisation) then stays well within the stack.
 */
export const MAX_RECORD_DEPTH = 64;

/** Whether data nests deeper than `max`: iterative and depth-first, so any depth (or a cycle) ends in `max` steps down. */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const nodes: unknown[] = [value];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop() as number;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) {
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

function parseValid(raw: unknown, check: () => RecordCheck): ParseResult {
  const migrated = migrate(raw);
  // The common case, a record exactly in the current shape, is answered
  // without a copy (every store validates each write of an operation) and
  // returns that very object. Anything else is decided by the validator,
  // which copies and names the problems.
  if (isExactRecord(migrated)) return { ok: true, record: migrated };
  const checked = check()(migrated);
  return checked.ok ? { ok: true, record: checked.value } : { ok: false, problems: checked.problems };
}

/**
 * Upgrades records written by older versions to `RECORD_VERSION`. There is
 * only version 1 so far; a future version adds a step here, never edits old
 * records in place on disk until they are next written.
 */
function migrate(raw: unknown): unknown {
  return raw;
}

/**
 * Thrown by `parseStored` for a value that needs the validator before it is
 * loaded; `withRecordValidator` loads it and runs the store call again.
 */
export class ValidatorNotLoaded extends Error {}

/** The validator, once loaded; the load in progress. */
let loaded: RecordCheck | undefined;
let loading: Promise<void> | undefined;

/** `parseRecord` for the memory and IndexedDB stores: throws `ValidatorNotLoaded` where the validator is needed first. */
export function parseStored(raw: unknown): ParseResult {
  return parseWith(raw, () => {
    if (loaded === undefined) throw new ValidatorNotLoaded('the record validator is not loaded yet');
    return loaded;
  });
}

/**
 * Runs a store call; if it met a value that needs the validator before it
 * was loaded, loads it and runs the call once more. The first run changed
 * nothing: the store reads before it writes, and throws before its write
 * (an IndexedDB transaction aborts, the memory store's turn stops), so the
 * second run starts from the same records (an update's change function,
 * pure, is called again). A load that fails rejects the call with its error
 * and the next call that needs it loads again.
 */
export function withRecordValidator<T>(call: () => Promise<T>): Promise<T> {
  return call().catch((error: unknown) => {
    if (!(error instanceof ValidatorNotLoaded)) throw error;
    loading ??= import('./spec-validator.js').then(
      ({ validator }) => {
        loaded = validator(RECORD_SPEC, SPEC_KIT) as RecordCheck;
      },
      (failed: unknown) => {
        loading = undefined;
        throw failed;
      },
    );
    return loading.then(call);
  });
}
