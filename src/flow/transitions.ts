/**
 * Pure record transitions: claim, start an attempt, end it, settle. The loop
 * applies them inside `store.update`, so each one is atomic and fenced by the
 * lease epoch: a stale owner's write is refused, never merged.
 */
import { LeaseLostError, NotFoundError } from '../errors.js';
import type { Classification } from './classify.js';
import type { Stop } from './decide.js';
import type { AttemptRecord, OperationRecord, StoredResult } from './record.js';
import { isTerminal } from './record.js';

export interface Owner {
  id: string;
  leaseMs: number;
}

/** Result of trying to claim: ours (with the new epoch), settled, or owned by someone else until `untilMs`. */
export type ClaimOutcome =
  | { kind: 'claimed'; record: OperationRecord }
  | { kind: 'terminal'; record: OperationRecord }
  | { kind: 'busy'; record: OperationRecord; untilMs: number };

/**
 * Takes the lease when the record is free: no lease, an expired lease, or our
 * own. Bumps the epoch. An attempt left open by an owner that vanished
 * (its lease expired mid-flight) is closed as `ambiguous`: it may have
 * reached the server, so the next attempt reuses the same key.
 */
export function claim(current: OperationRecord | undefined, key: string, owner: Owner, nowMs: number): OperationRecord {
  if (current === undefined) throw new NotFoundError(key);
  if (isTerminal(current.state)) return current;
  const lease = current.lease;
  if (lease !== undefined && lease.until > nowMs) {
    // Held by someone else: leave it. Held by us and idle (e.g. created
    // already claimed): nothing to write, saving a durable write per operation.
    if (lease.owner !== owner.id || current.state === 'pending') return current;
  }
  const attempts = current.attempts.map(
    (a): AttemptRecord =>
      a.endedAt === undefined
        ? {
            ...a,
            endedAt: nowMs,
            class: 'ambiguous',
            sent: 'maybe',
            effect: 'unknown',
            error: `owner ${a.owner} lost its lease during the attempt`,
          }
        : a,
  );
  return {
    ...current,
    state: 'pending',
    attempts,
    epoch: current.epoch + 1,
    lease: { owner: owner.id, until: Math.max(nowMs, current.nextAttemptAt) + owner.leaseMs },
  };
}

/** What a claim produced: ours, settled, or held by another owner until `untilMs`. */
export function claimOutcome(record: OperationRecord, owner: Owner): ClaimOutcome {
  if (isTerminal(record.state)) return { kind: 'terminal', record };
  if (record.lease?.owner === owner.id) return { kind: 'claimed', record };
  return { kind: 'busy', record, untilMs: record.lease?.until ?? 0 };
}

/** Throws unless `current` is still ours at `epoch`. */
export function assertFenced(
  current: OperationRecord | undefined,
  key: string,
  owner: Owner,
  epoch: number,
): OperationRecord {
  if (current === undefined || current.epoch !== epoch || current.lease?.owner !== owner.id) {
    throw new LeaseLostError(key);
  }
  return current;
}

/** Records attempt `n` as started before it is sent; the lease covers the whole attempt. */
export function startAttempt(
  record: OperationRecord,
  owner: Owner,
  nowMs: number,
  attemptTimeoutMs: number,
): OperationRecord {
  const attempt: AttemptRecord = { n: record.attempts.length + 1, owner: owner.id, startedAt: nowMs, sent: 'maybe' };
  return {
    ...record,
    state: 'in_flight',
    attempts: [...record.attempts, attempt],
    lease: { owner: owner.id, until: nowMs + attemptTimeoutMs + owner.leaseMs },
  };
}

export interface AttemptEnd {
  classification: Classification;
  hintMs: number | undefined;
  nowMs: number;
}

/** The attempts with the last one closed by `end` (what `decide` reads). */
export function endLast(record: OperationRecord, end: AttemptEnd, delayMs?: number): AttemptRecord[] {
  const c = end.classification;
  return record.attempts
    .map((a, i) =>
      i === record.attempts.length - 1
        ? {
            ...a,
            endedAt: end.nowMs,
            class: c.class,
            sent: c.sent,
            effect: c.effect,
            error: c.class === 'completed' ? undefined : c.detail,
            ...(c.status === undefined ? {} : { status: c.status }),
            ...(end.hintMs === undefined ? {} : { hintMs: end.hintMs }),
            ...(delayMs === undefined ? {} : { delayMs }),
          }
        : a,
    )
    .map(stripUndefined);
}

function stripUndefined(a: AttemptRecord): AttemptRecord {
  const copy = { ...a };
  if (copy.error === undefined) delete copy.error;
  return copy;
}

/** The attempt succeeded: store the result for replay, release the lease. */
export function succeed(
  record: OperationRecord,
  end: AttemptEnd,
  result: StoredResult,
  retainMs: number,
): OperationRecord {
  const { lease: _lease, ...rest } = record;
  return { ...rest, state: 'succeeded', attempts: endLast(record, end), result, retainUntil: end.nowMs + retainMs };
}

/** Another attempt follows after `delayMs`; keep the lease across the wait so no one else takes it. */
export function scheduleRetry(
  record: OperationRecord,
  end: AttemptEnd,
  delayMs: number,
  owner: Owner,
  countsAsRetry: boolean,
): OperationRecord {
  const nextAttemptAt = end.nowMs + delayMs;
  return {
    ...record,
    state: 'pending',
    attempts: endLast(record, end, delayMs),
    nextAttemptAt,
    backoff: countsAsRetry ? { retries: record.backoff.retries + 1, lastDelayMs: delayMs } : record.backoff,
    lease: { owner: owner.id, until: nextAttemptAt + owner.leaseMs },
  };
}

/** A 401 triggered the refresh hook: resend at once, with the same key, only once. */
export function refreshAuth(record: OperationRecord, end: AttemptEnd, owner: Owner): OperationRecord {
  return { ...scheduleRetry(record, end, 0, owner, false), authRefreshed: true };
}

/** Terminal stop, with the reason and what to do next; the lease is released. */
export function settleStopped(
  record: OperationRecord,
  stop: Stop,
  nowMs: number,
  retainMs: number,
  end?: AttemptEnd,
): OperationRecord {
  const { lease: _lease, ...rest } = record;
  return {
    ...rest,
    state: stop.state,
    attempts: end === undefined ? record.attempts : endLast(record, end),
    failure: {
      reason: stop.reason,
      message: stop.message,
      remediation: stop.remediation,
      ...(stop.status === undefined ? {} : { status: stop.status }),
      ...(stop.class === undefined ? {} : { class: stop.class }),
    },
    retainUntil: nowMs + retainMs,
  };
}

/** Releases our lease while keeping the record pending (e.g. the client closed). */
export function release(record: OperationRecord): OperationRecord {
  const { lease: _lease, ...rest } = record;
  return { ...rest, state: 'pending' };
}
