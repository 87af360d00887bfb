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
