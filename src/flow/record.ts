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
 * store turns `ok: false` into a quarantine entry.
 */
export function parseRecord(raw: unknown): ParseResult {
  const migrated = migrate(raw);
  const parsed = recordSchema.safeParse(migrated);
  if (parsed.success) return { ok: true, record: parsed.data };
  return { ok: false, problems: parsed.error.issues.map(describeIssue) };
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
