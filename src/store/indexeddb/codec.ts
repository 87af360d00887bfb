/**
 * Records as the IndexedDB store keeps them: JSON text, parsed and
 * validated on every read like every other store (`parseStored`: the
 * store's calls run under `withRecordValidator`). A
 * value that does not validate is reported (with its raw text, for the
 * quarantine), never thrown at the caller; a record that could not be read
 * back is refused before it is written.
 */
import { CorruptRecordError } from '../../errors.js';
import { parseStored } from '../../model/parse.js';
import type { OperationRecord } from '../../model.js';

export type Decoded = { ok: true; record: OperationRecord } | { ok: false; problems: string[]; raw: string };

/** A stored value as text, whatever it is (for quarantine entries). */
export function rawText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Validates one stored value (JSON text, or a structured object written by something else). */
export function decode(key: string, value: unknown): Decoded {
  let data: unknown = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch (error) {
      return { ok: false, problems: [`not JSON: ${(error as Error).message}`], raw: value };
    }
  }
  const parsed = parseStored(data);
  if (!parsed.ok) return { ok: false, problems: parsed.problems, raw: rawText(value) };
  if (parsed.record.key !== key) {
    return { ok: false, problems: [`key: stored under ${key} but names ${parsed.record.key}`], raw: rawText(value) };
  }
  return parsed;
}

/** The exact text to store for `record`, and the record as it will read back. Refuses what could not be read back. */
export function encode(record: OperationRecord): { text: string; stored: OperationRecord } {
  const text = JSON.stringify(record);
  const parsed = parseStored(JSON.parse(text));
  if (!parsed.ok) {
    throw new CorruptRecordError(record.key, `refusing to write an invalid record (${parsed.problems.join('; ')})`);
  }
  return { text, stored: parsed.record };
}
