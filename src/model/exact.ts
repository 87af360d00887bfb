/**
 * The persisted record's shape as plain data (see `spec.ts`), field for
 * field the zod schema in `schema.ts`, and its exact check (no copy); the
 * validator that names problems is built from it on need (parse.ts).
 */
import type { OperationRecord } from './schema.js';
import { exactCheck, isPlain, type Spec, s } from './spec.js';
import { ATTEMPT_CLASSES, OPERATION_STATES, RECORD_VERSION, STOP_REASONS } from './vocabulary.js';

const body = s.tagged('encoding', {
  json: s.shape({ encoding: s.literal('json'), text: s.string() }),
  text: s.shape({ encoding: s.literal('text'), text: s.string() }),
  base64: s.shape({ encoding: s.literal('base64'), data: s.string() }),
});
const headers = s.dict(s.string());

/** The W3C trace context stored at the write-ahead (`trace`). */
export const TRACE_SPEC: Spec = s.shape({
  traceId: s.string({ pattern: /^[0-9a-f]{32}$/, format: '32 lowercase hex digits' }),
  spanId: s.string({ pattern: /^[0-9a-f]{16}$/, format: '16 lowercase hex digits' }),
  flags: s.count(),
});

export const RECORD_SPEC: Spec = s.shape({
  v: s.literal(RECORD_VERSION),
  key: s.string({ nonEmpty: true }),
  request: s.shape({
    method: s.string({ nonEmpty: true }),
    url: s.string({ nonEmpty: true }),
    headers,
    body: s.optional(body),
  }),
  fingerprint: s.string({ pattern: /^[0-9a-f]{64}$/, format: '64 lowercase hex digits (SHA-256)' }),
  policy: s.string(),
  policySnapshot: s.optional(s.dict(s.json())),
  scope: s.optional(s.string()),
  seq: s.optional(s.count()),
  createdAt: s.count(),
  deadlineAt: s.count(),
  retainUntil: s.optional(s.count()),
  state: s.enum(OPERATION_STATES),
  epoch: s.count(),
  lease: s.optional(s.shape({ owner: s.string(), until: s.count() })),
  attempts: s.list(
    s.shape({
      n: s.int(1),
      owner: s.string(),
      startedAt: s.count(),
      endedAt: s.optional(s.count()),
      class: s.optional(s.enum(ATTEMPT_CLASSES)),
      status: s.optional(s.int()),
      error: s.optional(s.string()),
      sent: s.enum(['not', 'maybe', 'definitely']),
      effect: s.optional(s.enum(['none', 'unknown', 'applied'])),
      hintMs: s.optional(s.count()),
      delayMs: s.optional(s.count()),
      providerId: s.optional(s.string()),
    }),
  ),
  attemptsOmitted: s.optional(
    s.shape({ count: s.count(), counted: s.count(), mayHaveTakenEffect: s.boolean(), byClass: s.dict(s.count()) }),
  ),
  nextAttemptAt: s.count(),
  backoff: s.shape({ retries: s.count(), lastDelayMs: s.count() }),
  authRefreshed: s.optional(s.boolean()),
  result: s.optional(
    s.shape({
      status: s.int(),
      headers,
      body: s.optional(body),
      replayed: s.boolean(),
      receivedAt: s.count(),
      reconciled: s.optional(s.boolean()),
    }),
  ),
  failure: s.optional(
    s.shape({
      reason: s.enum(STOP_REASONS),
      class: s.optional(s.enum(ATTEMPT_CLASSES)),
      status: s.optional(s.int()),
      message: s.string(),
      remediation: s.string(),
      mayHaveTakenEffect: s.optional(s.boolean()),
      response: s.optional(
        s.shape({ status: s.int(), headers, body: s.optional(body), truncated: s.optional(s.boolean()) }),
      ),
    }),
  ),
  meta: s.optional(s.dict(s.json())),
  reference: s.optional(s.string({ nonEmpty: true })),
  reconciliation: s.optional(
    s.shape({
      count: s.count(),
      checks: s.count(),
      nextCheckAt: s.optional(s.count()),
      history: s.list(
        s.shape({
          at: s.count(),
          by: s.enum(['hook', 'settle']),
          verdict: s.enum(['applied', 'not_applied', 'unknown']),
          error: s.optional(s.string()),
        }),
      ),
    }),
  ),
  trace: s.optional(TRACE_SPEC),
});

const exact = exactCheck(RECORD_SPEC);

/**
 * True only when `raw` is a valid record exactly in the current shape (plain
 * objects, no unknown keys): the common case, answered without a copy. It
 * may say no to a valid record (the validator then accepts it), never yes to
 * an invalid one.
 */
export const isExactRecord = (raw: unknown): raw is OperationRecord => exact(raw);

/** The record's field names, and the exact check of each, index for index. */
const FIELDS = Object.keys((RECORD_SPEC as Extract<Spec, { kind: 'shape' }>).fields);
const FIELD_NAMES: ReadonlySet<string> = new Set(FIELDS);
const FIELD_CHECKS = FIELDS.map((name) =>
  exactCheck((RECORD_SPEC as Extract<Spec, { kind: 'shape' }>).fields[name] as Spec),
);

/**
 * `isExactRecord` for a record written over `stored` (one that passed it and
 * cannot have changed since: the memory store's frozen copy): a field
 * holding the very value of `stored` is not checked again. A transition
 * changes a few fields; the request and the stored policy are checked once
 * per operation, not on each of its writes.
 */
export function isExactUpdate(next: OperationRecord, stored: OperationRecord): boolean {
  if (!isPlain(next)) return false;
  for (const name in next) if (!FIELD_NAMES.has(name)) return false;
  // Indexed, not `for…of` over entries: no array per field on every write.
  for (let i = 0; i < FIELDS.length; i++) {
    const name = FIELDS[i] as keyof OperationRecord;
    const value = next[name];
    if (value !== stored[name] && !(FIELD_CHECKS[i] as (value: unknown) => boolean)(value)) return false;
  }
  return true;
}
