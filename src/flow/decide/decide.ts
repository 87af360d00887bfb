/**
 * flow/decide/: the pure decisions: an observation's class (classify), retry
 * or stop (decide), every change of a record (transitions, attempt history,
 * revise, the policy snapshot). Nothing here sleeps, sends or writes; it may
 * import flow/request/ only, never the loop that acts on its answers.
 *
 * Retry or stop: a pure function of the record, the attempt's class, the
 * server's hint, the policy and the time. It returns a value; only the loop
 * sleeps or writes (cockatiel's habit). Every stop says why.
 */

import type { AttemptClass, AttemptRecord, OperationRecord, StopReason } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import { backoffDelayMs, hintedDelayMs } from '../../policy/backoff.js';
import type { Classification } from './classify.js';

export type Decision =
  | { kind: 'succeed' }
  /** 401 and an `onUnauthorized` hook that has not run yet: refresh, then resend at once with the same key. */
  | { kind: 'refresh_auth' }
  | {
      kind: 'retry';
      delayMs: number;
      /** Retries after these classes spend retry budget and pass the host gate. */
      budgeted: boolean;
      why: AttemptClass;
    }
  | Stop;

export interface Stop {
  kind: 'stop';
  state: 'blocked' | 'failed' | 'unknown';
  reason: StopReason;
  message: string;
  remediation: string;
  /** Some attempt may have taken effect (whatever the state): reconcile before anything else. */
  mayHaveTakenEffect: boolean;
  status?: number | undefined;
  class?: AttemptClass | undefined;
}

export interface DecideInput {
  /** The record, with the attempt just ended already in `attempts`. */
  record: OperationRecord;
  classification: Classification;
  /** Server hint in ms (Retry-After or RateLimit), if any. */
  hintMs: number | undefined;
  policy: ResolvedPolicy;
  nowMs: number;
  random: () => number;
  /** An `onUnauthorized` hook exists and has not been used for this operation. */
  canRefreshAuth: boolean;
}

/** @internal The loop's step; callers see its result in events and outcomes. */
export function decide(input: DecideInput): Decision {
  const { record, classification: c, policy, nowMs } = input;
  switch (c.class) {
    case 'completed':
      return { kind: 'succeed' };
    case 'correctable':
      if (c.status === 401 && input.canRefreshAuth) return { kind: 'refresh_auth' };
      return stopWith(record, 'correctable', `The server refused the request: ${c.detail}`, c);
    case 'permanent':
      // A 3xx is no refusal: say what happened (redirected, not followed, may have been applied).
      return stopWith(
        record,
        'permanent',
        `${c.redirect ? 'The server redirected the request' : 'The server rejected the request for good'}: ${c.detail}`,
        c,
      );
    case 'not_sent':
    case 'ambiguous':
    case 'retryable':
    case 'in_progress':
      break;
  }
  // Only tries that may have done something count toward maxAttempts: unsent
  // attempts, "still in progress" and "not applied, come back later" answers
  // are bounded by the deadline alone (their waits grow instead).
  if (countsTowardMaxAttempts(c) && attemptsThatCount(record) >= policy.maxAttempts) {
    return stopWith(record, 'attempts', `Gave up after ${policy.maxAttempts} attempts; last: ${c.detail}`, c);
  }
  let delayMs: number;
  const hint = policy.retryAfter.honor ? input.hintMs : undefined;
  if (hint !== undefined) {
    if (hint > policy.retryAfter.maxRetryAfterMs) {
      return stopWith(
        record,
        'deadline',
        `The server asked to wait ${hint} ms, more than retryAfter.maxRetryAfterMs (${policy.retryAfter.maxRetryAfterMs})`,
        c,
      );
    }
    const wait = { hintMs: hint, grownMs: notAppliedGrowthMs(record, hint), capMs: hint * NOT_APPLIED_MAX_HINTS };
    delayMs = hintedDelayMs(wait, policy.retryAfter.jitterMs, input.random);
  } else {
    delayMs = backoffDelayMs(policy.backoff, record.backoff.retries, record.backoff.lastDelayMs, input.random);
  }
  // The original request is still running on the server: asking again sooner cannot help.
  const floorMs = c.class === 'in_progress' ? inProgressFloorMs(record) : 0;
  delayMs = Math.max(delayMs, floorMs);
  if (hint !== undefined && nowMs + hint >= record.deadlineAt) {
    return stopWith(record, 'deadline', `The server asked to wait ${hint} ms, past the deadline`, c);
  }
  if (nowMs + delayMs >= record.deadlineAt) {
    // A random delay that overshoots must not cost the last try: wait half of
    // what is left instead, and leave the other half to the attempt — unless
    // that is shorter than a wait worth making.
    const lastChanceMs = Math.floor((record.deadlineAt - nowMs) / 2);
    // After a hint, the last chance is the earliest moment the server allows,
    // if that still leaves the attempt half of the time that is left.
    if (hint !== undefined && hint <= lastChanceMs && hint >= floorMs) {
      return {
        kind: 'retry',
        delayMs: hint,
        budgeted: c.class === 'retryable' || c.class === 'ambiguous',
        why: c.class,
      };
    }
    if (hint !== undefined || lastChanceMs < Math.max(floorMs, policy.backoff.baseDelayMs)) {
      return stopWith(record, 'deadline', `The deadline leaves no time for another attempt; last: ${c.detail}`, c);
    }
    delayMs = lastChanceMs;
  }
  return { kind: 'retry', delayMs, budgeted: c.class === 'retryable' || c.class === 'ambiguous', why: c.class };
}

/**
 * The least wait after a "still in progress" answer (409 of the IETF draft,
 * Stripe's `idempotency_key_in_use`) without `Retry-After`: 1 s, doubling
 * with each such answer in a row, up to 8 s. The ordinary backoff (250 ms
 * base) would spend the whole attempt budget while a slow payment is still
 * being processed.
 */
export function inProgressFloorMs(record: OperationRecord): number {
  let streak = 0;
  for (let i = record.attempts.length - 1; i >= 0 && record.attempts[i]?.class === 'in_progress'; i--) streak++;
  return Math.min(IN_PROGRESS_MAX_FLOOR_MS, IN_PROGRESS_FLOOR_MS * 2 ** Math.max(0, streak - 1));
}

const IN_PROGRESS_FLOOR_MS = 1_000;
const IN_PROGRESS_MAX_FLOOR_MS = 8_000;

/**
 * Whether an attempt counts toward `maxAttempts`: it may have reached the
 * server and done something. Provably unsent attempts, "still in progress"
 * answers and retryable answers that prove nothing was applied (503, 429 …
 * with effect `none`) do not: a host that keeps saying "not now" is waited
 * out until the deadline, with growing waits, instead of spending every
 * attempt inside an outage and failing seconds before the host recovers.
 */
export function countsTowardMaxAttempts(a: Pick<AttemptRecord, 'sent' | 'class' | 'effect'>): boolean {
  if (a.sent === 'not' || a.class === 'in_progress') return false;
  return !(a.class === 'retryable' && a.effect === 'none');
}

/** Attempts that count toward `maxAttempts` (see `countsTowardMaxAttempts`), dropped ones included. */
export function attemptsThatCount(record: OperationRecord): number {
  let counted = record.attemptsOmitted?.counted ?? 0;
  for (const a of record.attempts) if (countsTowardMaxAttempts(a)) counted++;
  return counted;
}

/**
 * The earliest next attempt after a server hint (`Retry-After`): the hint
 * itself the first time; when the host keeps answering "not applied", it
 * doubles with each such answer in a row, up to `NOT_APPLIED_MAX_HINTS`
 * hints. Separate clients (200 browsers) cannot coordinate: growing waits
 * lower the load an outage draws, and the cap keeps the time from recovery
 * to the next try within three of the server's own intervals (the jitter
 * inside them, see `hintedDelayMs`).
 */
export function notAppliedGrowthMs(record: OperationRecord, hintMs: number): number {
  let streak = 0;
  for (let i = record.attempts.length - 1; i >= 0; i--) {
    const a = record.attempts[i];
    if (a === undefined || a.class !== 'retryable' || a.effect !== 'none') break;
    streak++;
  }
  return Math.min(hintMs * 2 ** Math.max(0, streak - 1), hintMs * NOT_APPLIED_MAX_HINTS);
}

const NOT_APPLIED_MAX_HINTS = 3;

/**
 * The one place that decides "may have taken effect", from the attempt
 * history: some attempt's effect is unknown or applied, an attempt was left
 * open after it may have been sent, or a dropped part of the history said
 * so. Sticky: once true for a record, it stays true, and every terminal
 * state, message and remediation built from the record carries it, until
 * reconciliation settles the question (`not_applied`).
 */
export function mayHaveTakenEffect(
  record: Pick<OperationRecord, 'attempts' | 'attemptsOmitted'> & { failure?: OperationRecord['failure'] },
): boolean {
  // Reconciled (a hook or a webhook said it never took effect): that verdict is the fact now.
  if (record.failure?.reason === 'not_applied') return false;
  if (record.attemptsOmitted?.mayHaveTakenEffect === true) return true;
  return record.attempts.some(
    (a) => a.effect === 'unknown' || a.effect === 'applied' || (a.endedAt === undefined && a.sent !== 'not'),
  );
}

/**
 * A stop in the right terminal state: `blocked` for a correctable refusal;
 * otherwise `unknown` when any attempt may have taken effect (an operation
 * that may have happened never ends as `failed`), else `failed`.
 */
export function stopWith(
  record: OperationRecord,
  reason: StopReason,
  message: string,
  c?: Pick<Classification, 'status' | 'class'>,
): Stop {
  const maybe = mayHaveTakenEffect(record);
  const state = reason === 'correctable' ? 'blocked' : maybe ? 'unknown' : 'failed';
  return {
    kind: 'stop',
    state,
    reason,
    message,
    mayHaveTakenEffect: maybe,
    remediation: remediationFor(state, c?.status, maybe),
    status: c?.status,
    class: c?.class,
  };
}

/** What to do next. Never "send it again" or "discard" when an attempt may have taken effect. */
export function remediationFor(state: Stop['state'], status: number | undefined, maybe: boolean): string {
  switch (state) {
    case 'blocked': {
      const fix = `Fix the ${status === 401 || status === 403 ? 'credentials or permissions' : 'request'}, then retry(key) (same key)`;
      return maybe
        ? `An earlier attempt may have taken effect: look it up at the provider by its key first. ${fix}. Do not discard it for a new operation: that could do it twice.`
        : `${fix}, or discard(key).`;
    }
    case 'failed':
      return 'No attempt took effect: send it again as a new operation when ready.';
    case 'unknown':
      return 'It may have taken effect: look it up at the provider by its key to reconcile, or retry(key) (same key, deduplicated).';
  }
}
