/**
 * An update's guess before its claim (records.ts `readAhead`): what `fn`
 * makes of the record as read without the claim. The read under the claim
 * decides; a guess only saves work when it holds.
 */
import type { OperationRecord, ParseResult } from '../../model.js';
import type { Updater } from '../store.js';

/** What an update's `fn` made of the record read without the claim (see `readAhead`). */
export type ReadAhead =
  | { kind: 'unchanged'; record: OperationRecord | undefined }
  | {
      kind: 'change';
      text: string | undefined;
      next: OperationRecord;
      /** The record `next` was computed from, validated (serialize checks only what changed). */
      current: OperationRecord | undefined;
    }
  | { kind: 'unknown' };

/** What `fn` makes of record `name` as `text` holds it (`readAhead`), `check` validating the text. */
export function aheadOf(
  name: string,
  text: string | undefined,
  fn: Updater,
  check: (name: string, text: string) => ParseResult,
): ReadAhead {
  let current: OperationRecord | undefined;
  if (text !== undefined) {
    const checked = check(name, text);
    if (!checked.ok) return { kind: 'unknown' };
    current = checked.record;
  }
  try {
    const next = fn(current);
    if (next === current || next === undefined) return { kind: 'unchanged', record: current };
    return { kind: 'change', text, next, current };
  } catch {
    return { kind: 'unknown' };
  }
}
