/**
 * The text of a record file: the record as one JSON line, then a line
 * naming the process that wrote it and the record's revision. How it is
 * read back, checked and written; no I/O here.
 */

import { isExactRecord } from '../../model/exact.js';
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
 */
export function serialize(record: OperationRecord): { text: string; stored: OperationRecord } {
  const text = JSON.stringify(record);
  if (isExactRecord(record) && isJsonValue(record)) return { text, stored: record };
  const parsed = parseRecord(JSON.parse(text));
  if (!parsed.ok) {
    throw new TypeError(`Refusing to store an invalid record for ${record.key}: ${parsed.problems.join('; ')}`);
  }
  return { text, stored: parsed.record };
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
