/**
 * The persisted operation record: plain, versioned JSON data, validated with
 * zod on every read (stores call `parseRecord`). Only this file knows the
 * schema and how to migrate older versions.
 */
import * as z from 'zod/mini';

/** Current schema version written by this build. */
export const RECORD_VERSION = 1;

export const OPERATION_STATES = ['pending', 'in_flight', 'succeeded', 'blocked', 'failed', 'unknown'] as const;
/**
 * - `pending`: waiting for its next attempt (`nextAttemptAt`).
 * - `in_flight`: an owner holds the lease; an attempt may be on the wire.
 * - `succeeded`: completed; `result` is stored and replayed to repeat sends.
 * - `blocked`: the server refused the input or authority; fix, then `retry(key)`.
 * - `failed`: definitely not done (no attempt can have taken effect).
 * - `unknown`: may have taken effect; reconcile, or `retry(key)` with the same key.
 */
export type OperationState = (typeof OPERATION_STATES)[number];
export const TERMINAL_STATES: readonly OperationState[] = ['succeeded', 'blocked', 'failed', 'unknown'];

export const ATTEMPT_CLASSES = [
  'completed',
  'not_sent',
  'ambiguous',
  'retryable',
  'in_progress',
  'correctable',
  'permanent',
] as const;
/** The documented class of one attempt's result (see `classify`). */
export type AttemptClass = (typeof ATTEMPT_CLASSES)[number];

export const STOP_REASONS = ['attempts', 'deadline', 'budget', 'correctable', 'permanent', 'aborted'] as const;
/** Why an operation stopped without success. */
export type StopReason = (typeof STOP_REASONS)[number];

/** Whether the request of an attempt left this machine. */
export type SentStatus = 'not' | 'maybe' | 'definitely';
/** What we know about the attempt's effect on the server. */
export type EffectStatus = 'none' | 'unknown' | 'applied';

const int = () => z.number().check(z.int(), z.minimum(0));

const storedBodySchema = z.discriminatedUnion('encoding', [
  z.object({ encoding: z.literal('json'), text: z.string() }),
  z.object({ encoding: z.literal('text'), text: z.string() }),
  z.object({ encoding: z.literal('base64'), data: z.string() }),
]);
/** A body as exact bytes: JSON and text as their UTF-8 text, anything else as base64. */
export type StoredBody = z.infer<typeof storedBodySchema>;

const headersSchema = z.record(z.string(), z.string());

const requestSchema = z.object({
  method: z.string().check(z.minLength(1)),
  url: z.string().check(z.minLength(1)),
  /** Only allow-listed headers; credentials are supplied at send time and never stored. */
  headers: headersSchema,
  body: z.optional(storedBodySchema),
});
export type StoredRequest = z.infer<typeof requestSchema>;

const attemptSchema = z.object({
  n: z.number().check(z.int(), z.minimum(1)),
  owner: z.string(),
  startedAt: int(),
  endedAt: z.optional(int()),
  class: z.optional(z.enum(ATTEMPT_CLASSES)),
  status: z.optional(z.number().check(z.int())),
  error: z.optional(z.string()),
  sent: z.enum(['not', 'maybe', 'definitely']),
  effect: z.optional(z.enum(['none', 'unknown', 'applied'])),
  /** Server hint (Retry-After / RateLimit) in ms, when one came. */
  hintMs: z.optional(int()),
  /** The delay chosen before the next attempt, when one was scheduled. */
  delayMs: z.optional(int()),
});
export type AttemptRecord = z.infer<typeof attemptSchema>;
/** What errors and events expose about an attempt. */
export type AttemptSummary = Readonly<AttemptRecord>;

const resultSchema = z.object({
  status: z.number().check(z.int()),
  headers: headersSchema,
  body: z.optional(storedBodySchema),
  /** The server said this answer is a replay of an earlier one (e.g. `Idempotent-Replayed`). */
  replayed: z.boolean(),
  receivedAt: int(),
});
export type StoredResult = z.infer<typeof resultSchema>;

const failureSchema = z.object({
  reason: z.enum(STOP_REASONS),
  class: z.optional(z.enum(ATTEMPT_CLASSES)),
  status: z.optional(z.number().check(z.int())),
  message: z.string(),
  remediation: z.string(),
  /** Some attempt may have reached the server and taken effect (see `mayHaveTakenEffect`): reconcile before anything else. */
  mayHaveTakenEffect: z.optional(z.boolean()),
});
export type StoredFailure = z.infer<typeof failureSchema>;

const leaseSchema = z.object({ owner: z.string(), until: int() });

/**
 * What is left of attempts dropped from the middle of a long history (the
 * first and the latest are kept): a refused connection retried for a day
 * must not grow the record without bound, yet nothing that decides a state
 * may be forgotten.
 */
const omittedSchema = z.object({
  /** How many attempts were dropped. */
  count: int(),
  /** Of those, how many may have reached the server (they count toward `maxAttempts`). */
  counted: int(),
  /** Some dropped attempt may have taken effect. */
  mayHaveTakenEffect: z.boolean(),
  /** Dropped attempts by class. */
  byClass: z.record(z.string(), int()),
});
export type OmittedAttempts = z.infer<typeof omittedSchema>;

export const recordSchema = z.object({
  v: z.literal(RECORD_VERSION),
  /** The idempotency key; also the record's id in every store. */
  key: z.string().check(z.minLength(1)),
  request: requestSchema,
  /** SHA-256 (hex) of the canonical (RFC 8785) method, URL and body. */
  fingerprint: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  /** Name of the endpoint policy resolved when the operation was created. */
  policy: z.string(),
  /**
   * That policy, resolved, as plain data: whoever resumes the operation
   * finishes it under the rules it started under (see flow/policy-snapshot.ts).
   */
  policySnapshot: z.optional(z.record(z.string(), z.unknown())),
  /** Optional ordering scope: operations of one scope are sent one after another. */
  scope: z.optional(z.string()),
  /**
   * Write-ahead order: a number that only grows, assigned when the record is
   * created. Scope order and resume order use it, never a timestamp or a
   * key (many operations are created within one millisecond).
   */
  seq: z.optional(int()),
  createdAt: int(),
  deadlineAt: int(),
  retainUntil: z.optional(int()),
  state: z.enum(OPERATION_STATES),
  /** Fencing counter: bumped on every claim; writes by an older epoch are refused. */
  epoch: int(),
  lease: z.optional(leaseSchema),
  attempts: z.array(attemptSchema),
  attemptsOmitted: z.optional(omittedSchema),
  nextAttemptAt: int(),
  /** Backoff state, serialisable so a resumed operation continues its schedule. */
  backoff: z.object({ retries: int(), lastDelayMs: int() }),
  /** A 401 already triggered `onUnauthorized` once for this operation. */
  authRefreshed: z.optional(z.boolean()),
  result: z.optional(resultSchema),
  failure: z.optional(failureSchema),
  /** Caller metadata (plain JSON), e.g. a user id used by `clear()`. */
  meta: z.optional(z.record(z.string(), z.unknown())),
});
/** The persisted operation. */
export type OperationRecord = z.infer<typeof recordSchema>;

export type ParseResult = { ok: true; record: OperationRecord } | { ok: false; problems: string[] };

/**
 * Validates (and, when older, migrates) raw stored data. Never throws: a
 * store turns `ok: false` into a quarantine entry. The record returned may be
 * `raw` itself (when it is exactly a current, valid record) or a new object
 * (zod's output, without unknown keys).
 */
export function parseRecord(raw: unknown): ParseResult {
  const migrated = migrate(raw);
  // The common case, a record exactly in the current shape, is answered by a
  // plain check of the same schema (~4 µs against ~12 µs for zod/mini's object parser;
  // every store validates each of the three writes of an operation). It
  // returns that very object. Anything it does not vouch for goes to zod,
  // which decides and names the problems.
  if (isExactRecord(migrated)) return { ok: true, record: migrated };
  const parsed = recordSchema.safeParse(migrated);
  if (parsed.success) return { ok: true, record: parsed.data };
  return { ok: false, problems: parsed.error.issues.map(describeIssue) };
}

/**
 * True only when `raw` passes `recordSchema` and zod's output would equal it
 * (plain objects, no unknown keys): the schema above, written out again as
 * plain checks for speed. It may say no to a valid record (zod then accepts
 * it), never yes to an invalid one; `test/flow/record.test.ts` holds it to
 * that, field by field.
 */
const isExactRecord = (raw: unknown): raw is OperationRecord => exactRecord(raw);

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

/**
 * Upgrades records written by older versions to `RECORD_VERSION`. There is
 * only version 1 so far; a future version adds a step here, never edits old
 * records in place on disk until they are next written.
 */
function migrate(raw: unknown): unknown {
  return raw;
}

/** A one-line, field-naming description of a zod issue (zod/mini carries no messages). */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  switch (issue.code) {
    case 'invalid_type':
      return `${field}: expected ${issue.expected}`;
    case 'invalid_value':
      return `${field}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return `${field}: must be >= ${String(issue.minimum)}`;
    case 'too_big':
      return `${field}: must be <= ${String(issue.maximum)}`;
    case 'invalid_format':
      return `${field}: invalid ${issue.format}`;
    case 'unrecognized_keys':
      return `${field}: unknown option(s) ${issue.keys.join(', ')}`;
    case 'invalid_union':
      return `${field}: does not match any allowed form`;
    default:
      return `${field}: ${issue.message}`;
  }
}

/** Order of creation: `seq` when the record has one, else its creation time (records written before `seq`). */
export function writeOrder(record: { seq?: number | undefined; createdAt: number }): number {
  return record.seq ?? record.createdAt * SEQ_PER_MS;
}

/** Sequence numbers per millisecond: `seq` starts from the clock so it keeps growing across restarts. */
export const SEQ_PER_MS = 1_000;

export function isTerminal(state: OperationState): boolean {
  return TERMINAL_STATES.includes(state);
}
