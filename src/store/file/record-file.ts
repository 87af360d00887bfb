/**
 * The text of a record file: the record as one JSON line, then a line
 * naming the process that wrote it and the record's revision. How it is
 * read back, checked and written; no I/O here.
 */
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

/** JSON text of a record, and the record as a later read will return it (validated before anything is written). */
export function serialize(record: OperationRecord): { text: string; stored: OperationRecord } {
  const text = JSON.stringify(record);
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
