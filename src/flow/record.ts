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
});
export type StoredFailure = z.infer<typeof failureSchema>;

const leaseSchema = z.object({ owner: z.string(), until: int() });

export const recordSchema = z.object({
  v: z.literal(RECORD_VERSION),
  /** The idempotency key; also the record's id in every store. */
  key: z.string().check(z.minLength(1)),
  request: requestSchema,
  /** SHA-256 (hex) of the canonical (RFC 8785) method, URL and body. */
  fingerprint: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  /** Name of the endpoint policy resolved when the operation was created. */
  policy: z.string(),
  /** Optional ordering scope: operations of one scope are sent one after another. */
  scope: z.optional(z.string()),
  createdAt: int(),
  deadlineAt: int(),
  retainUntil: z.optional(int()),
  state: z.enum(OPERATION_STATES),
  /** Fencing counter: bumped on every claim; writes by an older epoch are refused. */
  epoch: int(),
  lease: z.optional(leaseSchema),
  attempts: z.array(attemptSchema),
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
  // hand-written check (~1 µs against ~12 µs for zod/mini's object parser;
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
 * (no unknown, inherited or symbol keys, plain objects): the same rules as
 * the schema above, written out by hand for speed. It may say no to a valid
 * record (zod then accepts it), never yes to an invalid one;
 * `test/flow/record.test.ts` holds it to that, field by field.
 */
function isExactRecord(raw: unknown): raw is OperationRecord {
  if (!isPlain(raw)) return false;
  const r = raw as Record<string, unknown>;
  for (const key in r) if (!RECORD_KEYS.has(key)) return false;
  return (
    r.v === RECORD_VERSION &&
    isNonEmpty(r.key) &&
    isExactRequest(r.request) &&
    typeof r.fingerprint === 'string' &&
    FINGERPRINT.test(r.fingerprint) &&
    typeof r.policy === 'string' &&
    (r.scope === undefined || typeof r.scope === 'string') &&
    isCount(r.createdAt) &&
    isCount(r.deadlineAt) &&
    (r.retainUntil === undefined || isCount(r.retainUntil)) &&
    STATES.has(r.state) &&
    isCount(r.epoch) &&
    (r.lease === undefined || isExactLease(r.lease)) &&
    isExactAttempts(r.attempts) &&
    isCount(r.nextAttemptAt) &&
    isExactBackoff(r.backoff) &&
    (r.authRefreshed === undefined || typeof r.authRefreshed === 'boolean') &&
    (r.result === undefined || isExactResult(r.result)) &&
    (r.failure === undefined || isExactFailure(r.failure)) &&
    (r.meta === undefined || isStringKeyed(r.meta, () => true))
  );
}

const keysOf = (schema: { def: { shape: object } }): ReadonlySet<string> => new Set(Object.keys(schema.def.shape));
const RECORD_KEYS = keysOf(recordSchema);
const REQUEST_KEYS = keysOf(requestSchema);
const ATTEMPT_KEYS = keysOf(attemptSchema);
const RESULT_KEYS = keysOf(resultSchema);
const FAILURE_KEYS = keysOf(failureSchema);
const LEASE_KEYS = keysOf(leaseSchema);
const BACKOFF_KEYS = keysOf(recordSchema.def.shape.backoff);
const STATES = new Set<unknown>(OPERATION_STATES);
const CLASSES = new Set<unknown>(ATTEMPT_CLASSES);
const REASONS = new Set<unknown>(STOP_REASONS);
const SENT = new Set<unknown>(['not', 'maybe', 'definitely']);
const EFFECTS = new Set<unknown>(['none', 'unknown', 'applied']);
const FINGERPRINT = /^[0-9a-f]{64}$/;

/** An object literal or JSON.parse output: what zod's object and record parsers copy key for key. */
function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function hasOnly(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;
const isInt = (value: unknown): boolean => Number.isSafeInteger(value);
const isNonEmpty = (value: unknown): boolean => typeof value === 'string' && value.length > 0;

/** A plain object whose own keys are all strings (not `__proto__`, which zod drops) with values passing `ok`. */
function isStringKeyed(value: unknown, ok: (v: unknown) => boolean): boolean {
  if (!isPlain(value)) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string' || key === '__proto__' || !ok(value[key])) return false;
  }
  return true;
}

const isString = (value: unknown): boolean => typeof value === 'string';

function isExactBody(value: unknown): boolean {
  if (!isPlain(value)) return false;
  switch (value.encoding) {
    case 'json':
    case 'text':
      return typeof value.text === 'string' && hasOnly(value, BODY_TEXT_KEYS);
    case 'base64':
      return typeof value.data === 'string' && hasOnly(value, BODY_DATA_KEYS);
    default:
      return false;
  }
}
const BODY_TEXT_KEYS = new Set(['encoding', 'text']);
const BODY_DATA_KEYS = new Set(['encoding', 'data']);

function isExactRequest(value: unknown): boolean {
  return (
    isPlain(value) &&
    hasOnly(value, REQUEST_KEYS) &&
    isNonEmpty(value.method) &&
    isNonEmpty(value.url) &&
    isStringKeyed(value.headers, isString) &&
    (value.body === undefined || isExactBody(value.body))
  );
}

function isExactAttempts(value: unknown): boolean {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
  // By index, not `every`: zod reads holes of a sparse array as `undefined` (invalid).
  for (let i = 0; i < value.length; i++) if (!isExactAttempt(value[i])) return false;
  return true;
}

function isExactAttempt(value: unknown): boolean {
  return (
    isPlain(value) &&
    hasOnly(value, ATTEMPT_KEYS) &&
    isInt(value.n) &&
    (value.n as number) >= 1 &&
    typeof value.owner === 'string' &&
    isCount(value.startedAt) &&
    (value.endedAt === undefined || isCount(value.endedAt)) &&
    (value.class === undefined || CLASSES.has(value.class)) &&
    (value.status === undefined || isInt(value.status)) &&
    (value.error === undefined || typeof value.error === 'string') &&
    SENT.has(value.sent) &&
    (value.effect === undefined || EFFECTS.has(value.effect)) &&
    (value.hintMs === undefined || isCount(value.hintMs)) &&
    (value.delayMs === undefined || isCount(value.delayMs))
  );
}

function isExactResult(value: unknown): boolean {
  return (
    isPlain(value) &&
    hasOnly(value, RESULT_KEYS) &&
    isInt(value.status) &&
    isStringKeyed(value.headers, isString) &&
    (value.body === undefined || isExactBody(value.body)) &&
    typeof value.replayed === 'boolean' &&
    isCount(value.receivedAt)
  );
}

function isExactFailure(value: unknown): boolean {
  return (
    isPlain(value) &&
    hasOnly(value, FAILURE_KEYS) &&
    REASONS.has(value.reason) &&
    (value.class === undefined || CLASSES.has(value.class)) &&
    (value.status === undefined || isInt(value.status)) &&
    typeof value.message === 'string' &&
    typeof value.remediation === 'string'
  );
}

function isExactLease(value: unknown): boolean {
  return isPlain(value) && hasOnly(value, LEASE_KEYS) && typeof value.owner === 'string' && isCount(value.until);
}

function isExactBackoff(value: unknown): boolean {
  return isPlain(value) && hasOnly(value, BACKOFF_KEYS) && isCount(value.retries) && isCount(value.lastDelayMs);
}

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

export function isTerminal(state: OperationState): boolean {
  return TERMINAL_STATES.includes(state);
}
