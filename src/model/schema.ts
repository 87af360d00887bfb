/**
 * The persisted operation record as a zod schema: its types are inferred
 * from it (store authors get them, and `parseRecord`, from `oncely/store`).
 * At run time oncely checks records with the plain spec in `exact.ts`
 * instead, and no entry imports this module's values (zod costs a Node
 * process ~6 MB and 90 modules); a test holds the two checks to the same
 * answers on thousands of damaged variants.
 */
import * as z from 'zod/mini';
import { ATTEMPT_CLASSES, OPERATION_STATES, RECORD_VERSION, STOP_REASONS } from './vocabulary.js';

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
  /** The provider's id for the operation, read from this attempt's answer (the endpoint's `providerId`). */
  providerId: z.optional(z.string()),
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
  /** Settled by reconciliation (a `reconcile` hook or `settle`), not by an answer to an attempt. */
  reconciled: z.optional(z.boolean()),
});
export type StoredResult = z.infer<typeof resultSchema>;

/**
 * The server's final non-2xx answer to an operation that stopped: kept so a
 * checkout can show why a payment was refused (Stripe's `decline_code`,
 * RFC 9457 problem details). Headers as the result policy keeps them; the
 * body is read up to the endpoint's `maxResponseBytes`.
 */
const answerSchema = z.object({
  status: z.number().check(z.int()),
  headers: headersSchema,
  body: z.optional(storedBodySchema),
  /** The body was longer than `maxResponseBytes`: `body` holds its first bytes only. */
  truncated: z.optional(z.boolean()),
});
export type StoredAnswer = z.infer<typeof answerSchema>;

const failureSchema = z.object({
  reason: z.enum(STOP_REASONS),
  class: z.optional(z.enum(ATTEMPT_CLASSES)),
  status: z.optional(z.number().check(z.int())),
  message: z.string(),
  remediation: z.string(),
  /** Some attempt may have reached the server and taken effect (see `mayHaveTakenEffect`): reconcile before anything else. */
  mayHaveTakenEffect: z.optional(z.boolean()),
  /** The last attempt's answer, when it was a non-2xx response. */
  response: z.optional(answerSchema),
});
export type StoredFailure = z.infer<typeof failureSchema>;

const leaseSchema = z.object({ owner: z.string(), until: int() });

/**
 * The W3C trace context that was active when the operation was created
 * (`oncely/opentelemetry`): an operation resumed later, in another process,
 * links its span to it. Never sent: a `traceparent` header is made per attempt.
 */
const traceSchema = z.object({
  traceId: z.string().check(z.regex(/^[0-9a-f]{32}$/)),
  spanId: z.string().check(z.regex(/^[0-9a-f]{16}$/)),
  /** Trace flags (bit 0: sampled). */
  flags: int(),
});
export type StoredTrace = z.infer<typeof traceSchema>;

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

/** One verdict on an `unknown` operation: who gave it, when, and what it said. */
const verdictSchema = z.object({
  at: int(),
  /** `hook`: the endpoint's `reconcile`; `settle`: `client.settle` (a webhook). */
  by: z.enum(['hook', 'settle']),
  verdict: z.enum(['applied', 'not_applied', 'unknown']),
  /** The hook threw or answered something else: what went wrong. */
  error: z.optional(z.string()),
});
export type ReconcileVerdict = z.infer<typeof verdictSchema>;

/**
 * Reconciliation of an `unknown` operation: how many checks the hook made,
 * when the next one is due (none once `maxChecks` is spent), and the latest
 * verdicts (at most 20; `count` says how many there were in all, and is
 * the version every verdict is written against).
 */
const reconciliationSchema = z.object({
  count: int(),
  checks: int(),
  nextCheckAt: z.optional(int()),
  history: z.array(verdictSchema),
});
export type Reconciliation = z.infer<typeof reconciliationSchema>;

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
   * finishes it under the rules it started under (see flow/decide/policy-snapshot.ts).
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
  /**
   * A stable reference to the operation, apart from its key, minted once
   * (or the caller's): stamp it into the request (Stripe `metadata`) so a
   * lookup finds the operation after the provider forgot the key.
   */
  reference: z.optional(z.string().check(z.minLength(1))),
  reconciliation: z.optional(reconciliationSchema),
  /** The trace context active at the write-ahead, when the client is instrumented (`oncely/opentelemetry`). */
  trace: z.optional(traceSchema),
});
/** The persisted operation. */
export type OperationRecord = z.infer<typeof recordSchema>;
