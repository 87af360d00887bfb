/**
 * flow/decide/: the pure decisions: an observation's class (classify), retry
 * or stop (decide), every change of a record (transitions, attempt history,
 * revise, the policy snapshot). Nothing here sleeps, sends or writes; it may
 * import flow/request/ only, never the loop that acts on its answers.
 *
 * Retry or stop: a pure function of the record, the attempt's class, the
 * server's hint, the policy and the time (`decide`, in next-step.ts: loaded
 * on first need, since an attempt that succeeds needs none of it). It
 * returns a value; only the loop sleeps or writes (cockatiel's habit).
 * Every stop says why (stop.ts: the stop and its remediation texts, in the
 * chunks that stop an operation). This module keeps what every path needs:
 * "may have taken effect".
 */

import type { AttemptClass, AttemptRecord, OperationRecord, StopReason } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
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

/** What next-step.ts uses of this module, handed to it (it imports only types: no chunk shared with the client). */
export const DECIDE_KIT = { mayHaveTakenEffect, countsTowardMaxAttempts };
export type DecideKit = typeof DECIDE_KIT;
