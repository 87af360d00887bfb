/**
 * Retry or stop: a pure function of the record, the attempt's class, the
 * server's hint, the policy and the time. It returns a value; only the loop
 * sleeps or writes (cockatiel's habit). Every stop says why.
 */
import type { ResolvedPolicy } from '../options.js';
import { backoffDelayMs, hintedDelayMs } from '../policy/backoff.js';
import type { Classification } from './classify.js';
import type { AttemptClass, OperationRecord, StopReason } from './record.js';

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

export function decide(input: DecideInput): Decision {
  const { record, classification: c, policy, nowMs } = input;
  switch (c.class) {
    case 'completed':
      return { kind: 'succeed' };
    case 'correctable':
      if (c.status === 401 && input.canRefreshAuth) return { kind: 'refresh_auth' };
      return stopWith(record, 'correctable', `The server refused the request: ${c.detail}`, c);
    case 'permanent':
      return stopWith(record, 'permanent', `The server rejected the request for good: ${c.detail}`, c);
    case 'not_sent':
    case 'ambiguous':
    case 'retryable':
    case 'in_progress':
      break;
  }
  if (c.class !== 'not_sent' && attemptsThatCount(record) >= policy.maxAttempts) {
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
    delayMs = hintedDelayMs(hint, policy.retryAfter.jitterMs, input.random);
  } else {
    delayMs = backoffDelayMs(policy.backoff, record.backoff.retries, record.backoff.lastDelayMs, input.random);
  }
  if (hint !== undefined && nowMs + hint >= record.deadlineAt) {
    return stopWith(record, 'deadline', `The server asked to wait ${hint} ms, past the deadline`, c);
  }
  if (nowMs + delayMs >= record.deadlineAt) {
    return stopWith(record, 'deadline', `The deadline leaves no time for another attempt; last: ${c.detail}`, c);
  }
  return { kind: 'retry', delayMs, budgeted: c.class === 'retryable' || c.class === 'ambiguous', why: c.class };
}

/** Attempts that may have reached the server: provably unsent ones are free. */
export function attemptsThatCount(record: OperationRecord): number {
  return record.attempts.filter((a) => a.sent !== 'not').length;
}

/** True when some attempt may have taken effect on the server. */
export function mayHaveTakenEffect(record: OperationRecord): boolean {
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
  const state = reason === 'correctable' ? 'blocked' : mayHaveTakenEffect(record) ? 'unknown' : 'failed';
  return {
    kind: 'stop',
    state,
    reason,
    message,
    remediation: remediationFor(state, c?.status),
    status: c?.status,
    class: c?.class,
  };
}

function remediationFor(state: Stop['state'], status: number | undefined): string {
  switch (state) {
    case 'blocked':
      return status === 401 || status === 403
        ? 'Fix the credentials or permissions, then call retry(key) to resend with the same key, or discard(key).'
        : 'Fix the request or its prerequisites, then call retry(key) to resend with the same key, or discard(key).';
    case 'failed':
      return 'No attempt took effect on the server. Send it again as a new operation when ready.';
    case 'unknown':
      return 'The operation may have taken effect. Look it up at the provider by its key to reconcile, or call retry(key): the provider deduplicates a resend with the same key.';
  }
}
