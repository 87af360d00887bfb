/**
 * Reading stored data back into a record: migrate older versions, take the
 * fast exact check, else the validator decides and names the problems. Only
 * this module knows how to migrate.
 */
import { checkRecord, isExactRecord } from './exact.js';
import type { OperationRecord } from './schema.js';

export type ParseResult = { ok: true; record: OperationRecord } | { ok: false; problems: string[] };

/**
 * Validates (and, when older, migrates) raw stored data. Never throws: a
 * store turns `ok: false` into a quarantine entry. The record returned may be
 * `raw` itself (when it is exactly a current, valid record) or a new object
 * (a clean copy, without unknown keys).
 */
export function parseRecord(raw: unknown): ParseResult {
  // Stored data may come from another version or a hand edit: whatever it is, the answer is a verdict,
  // never a throw that would stop every pass over the store (a deep record overflowed the stack).
  try {
    if (nestsDeeperThan(raw, MAX_RECORD_DEPTH))
      return { ok: false, problems: [`nested deeper than ${MAX_RECORD_DEPTH}`] };
    return parseValid(raw);
  } catch (error) {
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

function parseValid(raw: unknown): ParseResult {
  const migrated = migrate(raw);
  // The common case, a record exactly in the current shape, is answered
  // without a copy (every store validates each write of an operation) and
  // returns that very object. Anything else is decided by the validator,
  // which copies and names the problems.
  if (isExactRecord(migrated)) return { ok: true, record: migrated };
  const checked = checkRecord(migrated);
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
