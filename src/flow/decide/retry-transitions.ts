/**
 * The changes of a record that only follow an attempt that did not simply
 * succeed: its end as `decide` reads it, a scheduled retry, the one auth
 * refresh, and the release of a refresh that never finished. Part of the
 * next step's chunk (flow/drive/after-answer.ts): a page whose sends simply
 * succeed never downloads them. Pure, like every change in transitions.ts;
 * it imports only types: what it uses of the client's modules comes in the
 * kit, so no chunk is shared with the client.
 */
import type { OperationRecord } from '../../model.js';
import type { AttemptEnd, endLast } from './attempt-history.js';
import type { revise } from './revise.js';
import type { leaseUntil, Owner } from './transitions.js';

/** What these changes use of the client's modules, handed over (see `NEXT_STEP_KIT`). */
export interface TransitionKit {
  revise: typeof revise;
  endLast: typeof endLast;
  leaseUntil: typeof leaseUntil;
}

/**
 * The record with its last attempt closed by `end`: what `decide` reads.
 * Not stored as such; the write that follows is the decision's transition.
 */
export function endAttempt(kit: TransitionKit, record: OperationRecord, end: AttemptEnd): OperationRecord {
  return kit.revise(record, { attempts: kit.endLast(record, end) });
}

/** Another attempt follows after `delayMs`; keep the lease across the wait so no one else takes it. */
export function scheduleRetry(
  kit: TransitionKit,
  record: OperationRecord,
  end: AttemptEnd,
  delayMs: number,
  owner: Owner,
  countsAsRetry: boolean,
): OperationRecord {
  const nextAttemptAt = end.nowMs + delayMs;
  return kit.revise(record, {
    state: 'pending',
    attempts: kit.endLast(record, end, delayMs),
    nextAttemptAt,
    backoff: countsAsRetry ? { retries: record.backoff.retries + 1, lastDelayMs: delayMs } : record.backoff,
    lease: { owner: owner.id, until: kit.leaseUntil(record, nextAttemptAt + owner.leaseMs, end.nowMs) },
  });
}

/** A 401 triggered the refresh hook: resend at once, with the same key, only once. */
export function refreshAuth(
  kit: TransitionKit,
  record: OperationRecord,
  end: AttemptEnd,
  owner: Owner,
): OperationRecord {
  return kit.revise(scheduleRetry(kit, record, end, 0, owner, false), { authRefreshed: true });
}

/**
 * `release` (transitions.ts), from inside an `onUnauthorized` call that
 * never finished (the client closed): the one refresh was not had, so the
 * next owner may ask for it on its own 401 instead of taking that 401 as final.
 */
export function releaseUnrefreshed(kit: TransitionKit, record: OperationRecord): OperationRecord {
  return kit.revise(record, { state: 'pending' }, ['lease', 'authRefreshed']);
}
