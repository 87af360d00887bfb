/**
 * `parseRecord`, for any store (oncely/store): the validator bundled with it,
 * so the answer is always synchronous. The browser's stores use
 * `parseStored` (parse.ts) instead, which loads the validator on need.
 */
import { RECORD_SPEC } from './exact.js';
import { type ParseResult, parseWith, type RecordCheck } from './parse.js';
import { SPEC_KIT } from './spec.js';
import { validator } from './spec-validator.js';

let check: RecordCheck | undefined;

/**
 * Validates (and, when older, migrates) raw stored data. Never throws: a
 * store turns `ok: false` into a quarantine entry. The record returned may be
 * `raw` itself (when it is exactly a current, valid record) or a new object
 * (a clean copy, without unknown keys).
 */
export function parseRecord(raw: unknown): ParseResult {
  return parseWith(raw, () => {
    check ??= validator(RECORD_SPEC, SPEC_KIT) as RecordCheck;
    return check;
  });
}
