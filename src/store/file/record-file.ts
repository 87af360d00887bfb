/**
 * The text of a record file: the record as one JSON line, then a line
 * naming the process that wrote it and the record's revision. How it is
 * read back, checked and written; no I/O here.
 */

import { isExactRecord, RECORD_SPEC } from '../../model/exact.js';
import { exactCheck, isPlain, type Spec } from '../../model/spec.js';
import { type OperationRecord, type ParseResult, parseRecord } from '../../model.js';
import { belongsTo, parseFileName } from './names.js';

/** Validates stored text: a JSON record line, the record schema, and that it is filed under its own key. */
export function check(name: string, text: string): ParseResult {
  let raw: unknown;
  try {
    raw = JSON.parse(recordLine(text));
  } catch (error) {
    return { ok: false, problems: [`not JSON: ${(error as Error).message}`] };
  }
  const parsed = parseRecord(raw);
  if (parsed.ok && !belongsTo(name, parsed.record.key)) {
    return { ok: false, problems: [`key: file ${name} holds the record of another key (${parsed.record.key})`] };
  }
  return parsed;
}

/** Whether a delete's condition holds for stored text: always without one, never for a corrupt text. */
export function holds(name: string, text: string, onlyIf?: (current: OperationRecord) => boolean): boolean {
  if (onlyIf === undefined) return true;
  const checked = check(name, text);
  return checked.ok && onlyIf(checked.record);
}

/** The key a (possibly corrupt) file stands for, as well as we can tell. */
export function idOf(name: string, text: string): string {
  const parsed = parseFileName(name);
  if (parsed.kind === 'record') return parsed.key;
  try {
    const key = (JSON.parse(recordLine(text)) as { key?: unknown } | null)?.key;
    if (typeof key === 'string' && belongsTo(name, key)) return key;
  } catch {
    // Unreadable: the file name is all we have.
  }
  return name;
}

/**
 * JSON text of a record, and the record as a later read will return it
 * (validated before anything is written). A record exactly in the current
 * shape and made of plain JSON values only (what the engine's transitions
 * build) reads back as itself, so it is returned as is, and its text is not
 * parsed back: a parse per write was most of what a write allocated.
 *
 * `from`, when given, is the validated record the update computed `record`
 * from, frozen (parsed.ts): a field that still holds its very value passed
 * that check and cannot have changed since, so only the fields a transition
 * changed are checked (as the memory store does): the request and the
 * policy snapshot are checked once per operation, not on each of its writes.
 */
export function serialize(record: OperationRecord, from?: OperationRecord): { text: string; stored: OperationRecord } {
  const text = JSON.stringify(record);
  if (from === undefined ? isExactRecord(record) && isJsonValue(record) : isExactUpdate(record, from)) {
    return { text, stored: record };
  }
  const parsed = parseRecord(JSON.parse(text));
  if (!parsed.ok) {
    throw new TypeError(`Refusing to store an invalid record for ${record.key}: ${parsed.problems.join('; ')}`);
  }
  return { text, stored: parsed.record };
}

/** The record's field names, and the exact check of each (model/exact.ts), index for index. */
const FIELDS: readonly string[] = RECORD_SPEC.kind === 'shape' ? Object.keys(RECORD_SPEC.fields) : [];
const FIELD_NAMES: ReadonlySet<string> = new Set(FIELDS);
const FIELD_CHECKS: readonly ((value: unknown) => boolean)[] = FIELDS.map((name) =>
  RECORD_SPEC.kind === 'shape' ? exactCheck(RECORD_SPEC.fields[name] as Spec) : () => false,
);

/**
 * `isExactRecord(next) && isJsonValue(next)`, except that a field holding
 * the very value of `from` (validated and frozen) is not checked again.
 */
export function isExactUpdate(next: OperationRecord, from: OperationRecord): boolean {
  if (!isPlain(next)) return false;
  // A key set to undefined would not read back (JSON drops it): the parse path decides that record.
  for (const name in next) {
    if (!FIELD_NAMES.has(name) || (next as unknown as Record<string, unknown>)[name] === undefined) return false;
  }
  // Indexed, not `for…of` over entries: no array per field on every write.
  for (let i = 0; i < FIELDS.length; i++) {
    const name = FIELDS[i] as keyof OperationRecord;
    const value = next[name];
    // `Object.is`: -0 equals 0 under `===`, but is written as 0.
    if (Object.is(value, from[name])) continue;
    if (!(FIELD_CHECKS[i] as (value: unknown) => boolean)(value)) return false;
    if (value !== undefined && !isJsonValue(value)) return false;
  }
  return true;
}

/** The revision in a stored file's writer line; 0 for a file written before revisions, or unreadable. */
export function revOf(text: string): number {
  const start = text.indexOf('\n') + 1;
  if (start === 0) return 0;
  try {
    const rev = (JSON.parse(text.slice(start)) as { rev?: unknown } | null)?.rev;
    return typeof rev === 'number' && Number.isFinite(rev) ? rev : 0;
  } catch {
    return 0;
  }
}

/** The record part of a stored file: its first line (the second names the writer). */
function recordLine(text: string): string {
  const end = text.indexOf('\n');
  return end === -1 ? text : text.slice(0, end);
}

/**
 * Whether `value` is JSON data that `JSON.parse(JSON.stringify(value))`
 * gives back equal: null, booleans, strings, finite numbers other than -0,
 * and arrays and plain objects of those (no holes, no `undefined` values,
 * which JSON drops or turns into null).
 */
function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) if (!isJsonValue(value[i])) return false;
        return true;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      for (const key in value) if (!isJsonValue((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}
