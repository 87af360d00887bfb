/**
 * The record schema written out again as plain checks: the fast path of
 * `parseRecord` for records exactly in the current shape.
 */
import type { OperationRecord } from './schema.js';
import { ATTEMPT_CLASSES, OPERATION_STATES, RECORD_VERSION, STOP_REASONS } from './vocabulary.js';

/**
 * True only when `raw` passes `recordSchema` and zod's output would equal it
 * (plain objects, no unknown keys): the schema above, written out again as
 * plain checks for speed. It may say no to a valid record (zod then accepts
 * it), never yes to an invalid one; `test/flow/record.test.ts` holds it to
 * that, field by field.
 */
export const isExactRecord = (raw: unknown): raw is OperationRecord => exactRecord(raw);

type Check = (value: unknown) => boolean;

/** An object literal or JSON.parse output: what zod's object and record parsers copy key for key. */
function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

const isString: Check = (v) => typeof v === 'string';
const isNonEmpty: Check = (v) => typeof v === 'string' && v.length > 0;
const isInt: Check = (v) => Number.isSafeInteger(v);
const isCount: Check = (v) => Number.isSafeInteger(v) && (v as number) >= 0;
const isBoolean: Check = (v) => typeof v === 'boolean';
const oneOf = (values: readonly unknown[]): Check => {
  const set = new Set(values);
  return (v) => set.has(v);
};
const optional =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);

/** zod's `record(string, …)`: own string keys only (zod drops `__proto__`). */
const dictOf =
  (check: Check): Check =>
  (v) => {
    if (!isPlain(v)) return false;
    for (const key of Reflect.ownKeys(v)) {
      if (typeof key !== 'string' || key === '__proto__' || !check(v[key])) return false;
    }
    return true;
  };

/** zod's `array(…)`, by index: zod reads holes of a sparse array as `undefined`. */
const listOf =
  (check: Check): Check =>
  (v) => {
    if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
    for (let i = 0; i < v.length; i++) if (!check(v[i])) return false;
    return true;
  };

/** zod's `object(…)`, without unknown keys (zod would strip them, so its output would differ). */
function shapeOf(fields: Record<string, Check>): Check {
  const keys = Object.keys(fields);
  const known = new Set(keys);
  const checks = Object.values(fields);
  return (v) => {
    if (!isPlain(v)) return false;
    for (const key in v) if (!known.has(key)) return false;
    for (let i = 0; i < keys.length; i++) if (!(checks[i] as Check)(v[keys[i] as string])) return false;
    return true;
  };
}

const exactText = shapeOf({ encoding: isString, text: isString });
const exactData = shapeOf({ encoding: isString, data: isString });
const exactBody: Check = (v) =>
  isPlain(v) &&
  (v.encoding === 'base64' ? exactData(v) : (v.encoding === 'json' || v.encoding === 'text') && exactText(v));
const exactHeaders = dictOf(isString);

const exactRecord = shapeOf({
  v: (v) => v === RECORD_VERSION,
  key: isNonEmpty,
  request: shapeOf({ method: isNonEmpty, url: isNonEmpty, headers: exactHeaders, body: optional(exactBody) }),
  fingerprint: (v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v),
  policy: isString,
  policySnapshot: optional(dictOf(() => true)),
  scope: optional(isString),
  seq: optional(isCount),
  createdAt: isCount,
  deadlineAt: isCount,
  retainUntil: optional(isCount),
  state: oneOf(OPERATION_STATES),
  epoch: isCount,
  lease: optional(shapeOf({ owner: isString, until: isCount })),
  attempts: listOf(
    shapeOf({
      n: (v) => Number.isSafeInteger(v) && (v as number) >= 1,
      owner: isString,
      startedAt: isCount,
      endedAt: optional(isCount),
      class: optional(oneOf(ATTEMPT_CLASSES)),
      status: optional(isInt),
      error: optional(isString),
      sent: oneOf(['not', 'maybe', 'definitely']),
      effect: optional(oneOf(['none', 'unknown', 'applied'])),
      hintMs: optional(isCount),
      delayMs: optional(isCount),
    }),
  ),
  attemptsOmitted: optional(
    shapeOf({ count: isCount, counted: isCount, mayHaveTakenEffect: isBoolean, byClass: dictOf(isCount) }),
  ),
  nextAttemptAt: isCount,
  backoff: shapeOf({ retries: isCount, lastDelayMs: isCount }),
  authRefreshed: optional(isBoolean),
  result: optional(
    shapeOf({
      status: isInt,
      headers: exactHeaders,
      body: optional(exactBody),
      replayed: isBoolean,
      receivedAt: isCount,
    }),
  ),
  failure: optional(
    shapeOf({
      reason: oneOf(STOP_REASONS),
      class: optional(oneOf(ATTEMPT_CLASSES)),
      status: optional(isInt),
      message: isString,
      remediation: isString,
      mayHaveTakenEffect: optional(isBoolean),
    }),
  ),
  meta: optional(dictOf(() => true)),
});
