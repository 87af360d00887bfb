/**
 * Pure record transitions: claim, start an attempt, end it, settle. The loop
 * applies them inside `store.update`, so each one is atomic and fenced by the
 * lease epoch: a stale owner's write is refused, never merged.
 */
import { LeaseLostError, NotFoundError } from '../errors.js';
import type { AttemptRecord, OmittedAttempts, OperationRecord, StoredFailure, StoredResult } from '../model.js';
import { isTerminal } from '../model.js';
import type { Classification } from './classify.js';
import { mayHaveTakenEffect, type Stop } from './decide.js';

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
export function claim(
  current: OperationRecord | undefined,
  key: string,
  owner: Owner,
  nowMs: number,
  foreignExpired: (lease: { owner: string; until: number }, epoch: number) => boolean = (lease) => lease.until <= nowMs,
): OperationRecord {
  if (current === undefined) throw new NotFoundError(key);
  if (isTerminal(current.state)) return current;
  const lease = current.lease;
  if (lease !== undefined) {
    // Someone else's: only once it has expired (judged by `foreignExpired`,
    // see flow/lease-watch.ts). Ours and idle (e.g. created already claimed):
    // nothing to write, saving a durable write per operation.
    if (lease.owner !== owner.id) {
      if (!foreignExpired(lease, current.epoch)) return current;
    } else if (lease.until > nowMs && current.state === 'pending') {
      return current;
    }
  }
  const attempts = current.attempts.map(
    (a): AttemptRecord =>
      a.endedAt === undefined
        ? Object.assign({}, a, {
            endedAt: nowMs,
            class: 'ambiguous' as const,
            sent: 'maybe' as const,
            effect: 'unknown' as const,
            error: `owner ${a.owner} lost its lease during the attempt`,
          })
        : a,
  );
  return revise(current, {
    state: 'pending',
    attempts,
    epoch: current.epoch + 1,
    lease: {
      owner: owner.id,
      until: leaseUntil(current, Math.max(nowMs, current.nextAttemptAt) + owner.leaseMs, nowMs),
    },
  });
}

/**
 * A lease never reaches past the deadline plus one attempt timeout (or
 * past now plus one attempt, for the last look after the deadline): after a
 * crash, another owner can take the operation over while it can still be
 * settled, not after its deadline has gone by.
 */
function leaseUntil(record: OperationRecord, wantedMs: number, nowMs: number): number {
  const timeoutMs = record.policySnapshot?.attemptTimeoutMs;
  if (typeof timeoutMs !== 'number') return wantedMs;
  return Math.min(wantedMs, Math.max(record.deadlineAt, nowMs) + timeoutMs);
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
  const attempt: AttemptRecord = { n: attemptNumber(record), owner: owner.id, startedAt: nowMs, sent: 'maybe' };
  const changes: Partial<OperationRecord> = {
    state: 'in_flight',
    attempts: [...record.attempts, attempt],
    lease: { owner: owner.id, until: leaseUntil(record, nowMs + attemptTimeoutMs + owner.leaseMs, nowMs) },
  };
  if (record.attempts.length >= MAX_KEPT_ATTEMPTS) {
    const { kept, omitted } = dropOldAttempts(record, attempt);
    changes.attempts = kept;
    changes.attemptsOmitted = omitted;
  }
  return revise(record, changes);
}

/** The number of the next attempt (1-based), counting attempts dropped from the history. */
export function attemptNumber(record: OperationRecord): number {
  return (record.attempts[record.attempts.length - 1]?.n ?? 0) + 1;
}

/** Attempts a record keeps: the first and the latest ones; the rest are summed up in `attemptsOmitted`. */
export const MAX_KEPT_ATTEMPTS = 32;

/** Folds the second-oldest attempts into the summary until the history fits, with `next` appended. */
function dropOldAttempts(
  record: OperationRecord,
  next: AttemptRecord,
): { kept: AttemptRecord[]; omitted: OmittedAttempts } {
  const all = [...record.attempts, next];
  const dropCount = all.length - MAX_KEPT_ATTEMPTS;
  const dropped = all.splice(1, dropCount);
  const previous = record.attemptsOmitted;
  const omitted: OmittedAttempts = {
    count: (previous?.count ?? 0) + dropped.length,
    counted: previous?.counted ?? 0,
    mayHaveTakenEffect:
      previous?.mayHaveTakenEffect === true || mayHaveTakenEffect({ attempts: dropped, attemptsOmitted: undefined }),
    byClass: { ...previous?.byClass },
  };
  for (const a of dropped) {
    if (a.sent !== 'not' && a.class !== 'in_progress') omitted.counted++;
    const cls = a.class ?? 'open';
    omitted.byClass[cls] = (omitted.byClass[cls] ?? 0) + 1;
  }
  return { kept: all, omitted };
}

export interface AttemptEnd {
  classification: Classification;
  hintMs: number | undefined;
  nowMs: number;
}

/** The attempts with the last one closed by `end` (what `decide` reads). */
export function endLast(record: OperationRecord, end: AttemptEnd, delayMs?: number): AttemptRecord[] {
  // Not a spread: see `revise`. Runs twice per attempt.
  const attempts = record.attempts.slice();
  const i = attempts.length - 1;
  const last = attempts[i];
  if (last === undefined) return attempts;
  const c = end.classification;
  const ended: AttemptRecord = Object.assign({}, last, {
    endedAt: end.nowMs,
    class: c.class,
    sent: c.sent,
    effect: c.effect,
  });
  if (c.class !== 'completed') ended.error = c.detail;
  else if (ended.error !== undefined) delete ended.error;
  if (c.status !== undefined) ended.status = c.status;
  if (end.hintMs !== undefined) ended.hintMs = end.hintMs;
  if (delayMs !== undefined) ended.delayMs = delayMs;
  attempts[i] = ended;
  return attempts;
}

/** The attempt succeeded: store the result for replay, release the lease. */
export function succeed(
  record: OperationRecord,
  end: AttemptEnd,
  result: StoredResult,
  retainMs: number,
): OperationRecord {
  return revise(
    record,
    { state: 'succeeded', attempts: endLast(record, end), result, retainUntil: end.nowMs + retainMs },
    'lease',
  );
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
  return revise(record, {
    state: 'pending',
    attempts: endLast(record, end, delayMs),
    nextAttemptAt,
    backoff: countsAsRetry ? { retries: record.backoff.retries + 1, lastDelayMs: delayMs } : record.backoff,
    lease: { owner: owner.id, until: leaseUntil(record, nextAttemptAt + owner.leaseMs, end.nowMs) },
  });
}

/** A 401 triggered the refresh hook: resend at once, with the same key, only once. */
export function refreshAuth(record: OperationRecord, end: AttemptEnd, owner: Owner): OperationRecord {
  return revise(scheduleRetry(record, end, 0, owner, false), { authRefreshed: true });
}

/** Terminal stop, with the reason and what to do next; the lease is released. */
export function settleStopped(
  record: OperationRecord,
  stop: Stop,
  nowMs: number,
  retainMs: number,
  end?: AttemptEnd,
): OperationRecord {
  const failure: StoredFailure = {
    reason: stop.reason,
    message: stop.message,
    remediation: stop.remediation,
    mayHaveTakenEffect: stop.mayHaveTakenEffect,
  };
  if (stop.status !== undefined) failure.status = stop.status;
  if (stop.class !== undefined) failure.class = stop.class;
  return revise(
    record,
    {
      state: stop.state,
      attempts: end === undefined ? record.attempts : endLast(record, end),
      failure,
      retainUntil: nowMs + retainMs,
    },
    'lease',
  );
}

/** Releases our lease while keeping the record pending (e.g. the client closed). */
export function release(record: OperationRecord): OperationRecord {
  return revise(record, { state: 'pending' }, 'lease');
}

/**
 * `retry(key)` of a `blocked` or `unknown` operation: pending again at once,
 * with the same key, a fresh backoff schedule and a new deadline (the caller
 * bounds it by the server's key retention). The failure, the retention and
 * the one-time auth refresh are forgotten; the attempts are kept, so
 * `mayHaveTakenEffect` still sees every attempt that may have reached the server.
 */
export function reopen(record: OperationRecord, nowMs: number, deadlineAt: number): OperationRecord {
  return revise(
    record,
    { state: 'pending', nextAttemptAt: nowMs, deadlineAt, backoff: { retries: 0, lastDelayMs: 0 } },
    ['failure', 'retainUntil', 'authRefreshed'],
  );
}

/**
 * Takes a live record's lease away from another owner: the lease is dropped
 * and the epoch bumped, so that owner's next write is refused. The open
 * attempt, if any, is closed as ambiguous by the next claim. Records that are
 * finished, unleased or leased by `owner` are returned unchanged.
 */
export function fenceForeign(record: OperationRecord, owner: string): OperationRecord {
  if (isTerminal(record.state) || record.lease === undefined || record.lease.owner === owner) return record;
  return revise(record, { epoch: record.epoch + 1 }, 'lease');
}

/**
 * A pending record removed by the app (e.g. `clear()` at sign-out): settled
 * as `aborted` and fenced (epoch bumped) in one write, so no loop can start
 * an attempt on it before it is deleted. Any other state is returned
 * unchanged (an in-flight record is left to its owner).
 */
export function abandon(record: OperationRecord, stop: Stop, nowMs: number): OperationRecord {
  if (record.state !== 'pending') return record;
  const settled = settleStopped(record, stop, nowMs, 0);
  return revise(settled, { epoch: record.epoch + 1 });
}

/**
 * `{ ...record, ...changes }` without the `drop` key(s), copied key by key.
 * Why not the spread: on Node 20, a spread followed by keys its source
 * lacks (`{ ...rest, result, retainUntil }`) costs about 1 µs per such key,
 * and `const { lease, ...rest } = record` another 0.6 µs; a record goes
 * through three of these per operation. Built this way: under 1 µs.
 */
function revise(
  record: OperationRecord,
  changes: Partial<OperationRecord>,
  drop?: keyof OperationRecord | readonly (keyof OperationRecord)[],
): OperationRecord {
  const dropped = (key: string): boolean =>
    drop === undefined ? false : typeof drop === 'string' ? key === drop : drop.includes(key as keyof OperationRecord);
  const next: Record<string, unknown> = {};
  for (const key in record) {
    if (!dropped(key) && !Object.hasOwn(changes, key)) next[key] = record[key as keyof OperationRecord];
  }
  for (const key in changes) next[key] = changes[key as keyof OperationRecord];
  return next as OperationRecord;
}
