/**
 * Every change of an operation record, as pure functions: create, claim (claim.ts),
 * start an attempt, end it, succeed, release, reopen, fence (and, in the
 * chunks loaded later, retry-transitions.ts: a scheduled retry, the auth
 * refresh; settle-stop.ts: a stop, clear()'s abandon). The
 * loop and the remediation calls apply them inside `store.update`, so each
 * one is atomic and fenced by the lease epoch: a stale owner's write is
 * refused, never merged. No other module builds a changed record.
 */
import { LeaseLostError, NotFoundError } from '../../errors.js';
import type { AttemptRecord, OperationRecord, StoredResult, StoredTrace } from '../../model.js';
import { isTerminal, RECORD_VERSION } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { OncelyRequest, PreparedOperation } from '../request/operation.js';
import { type AttemptEnd, attemptNumber, endLast, MAX_KEPT_ATTEMPTS } from './attempt-history.js';
import { snapshotOf } from './policy-snapshot.js';
import { revise } from './revise.js';
import type { Trim } from './trim-attempts.js';

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
 * A new operation, written ahead before its first attempt: pending, due at
 * once, and already claimed by its creator (epoch 1, so the first attempt
 * costs one durable write instead of two). `seq` orders it after every
 * record this client wrote before; the policy it is written under is stored
 * with it (see flow/decide/policy-snapshot.ts).
 */
export function create(
  prepared: PreparedOperation,
  policy: ResolvedPolicy,
  input: Pick<OncelyRequest, 'scope' | 'meta'>,
  nowMs: number,
  owner: Owner,
  seq: number,
  /** The caller's trace context (the `creating` event), stored to link a later resumption to it. */
  trace?: StoredTrace,
): OperationRecord {
  // Optional fields are assigned afterwards, not spread into the literal (see `revise`).
  const record: OperationRecord = {
    v: RECORD_VERSION,
    key: prepared.key,
    request: prepared.request,
    fingerprint: prepared.fingerprint,
    policy: policy.name,
    createdAt: nowMs,
    deadlineAt: nowMs + policy.deadlineMs,
    state: 'pending',
    epoch: 1,
    lease: { owner: owner.id, until: nowMs + owner.leaseMs },
    attempts: [],
    nextAttemptAt: nowMs,
    backoff: { retries: 0, lastDelayMs: 0 },
  };
  if (input.scope !== undefined) record.scope = input.scope;
  const meta = prepared.meta ?? input.meta;
  if (meta !== undefined) record.meta = meta;
  record.seq = seq;
  record.policySnapshot = snapshotOf(policy);
  if (prepared.reference !== undefined) record.reference = prepared.reference;
  if (trace !== undefined) record.trace = trace;
  return record;
}

/** How `claim` closes an attempt its owner never ended (it vanished, was killed, or lost its lease). */
export const LOST_DURING_ATTEMPT = 'lost its lease during the attempt';

/**
 * A lease never reaches past the deadline plus one attempt timeout (or
 * past now plus one attempt, for the last look after the deadline): after a
 * crash, another owner can take the operation over while it can still be
 * settled, not after its deadline has gone by.
 */
export function leaseUntil(record: OperationRecord, wantedMs: number, nowMs: number): number {
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

/**
 * Records attempt `n` as started before it is sent; the lease covers the
 * whole attempt. `trim` keeps a full history bounded (trim-attempts.ts, in
 * the later rounds' chunk): whoever starts an attempt of a record with
 * `MAX_KEPT_ATTEMPTS` attempts hands it over.
 */
export function startAttempt(
  record: OperationRecord,
  owner: Owner,
  nowMs: number,
  attemptTimeoutMs: number,
  trim?: Trim,
): OperationRecord {
  const attempt: AttemptRecord = { n: attemptNumber(record), owner: owner.id, startedAt: nowMs, sent: 'maybe' };
  const changes: Partial<OperationRecord> = {
    state: 'in_flight',
    attempts: [...record.attempts, attempt],
    lease: { owner: owner.id, until: leaseUntil(record, nowMs + attemptTimeoutMs + owner.leaseMs, nowMs) },
  };
  if (record.attempts.length >= MAX_KEPT_ATTEMPTS) {
    // A caller's bug, never data: refused before anything is written or sent.
    if (trim === undefined) throw new Error('no history trim');
    const { kept, omitted } = trim(record, attempt);
    changes.attempts = kept;
    changes.attemptsOmitted = omitted;
  }
  return revise(record, changes);
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
 * What the claim (claim.ts, in the later rounds' chunk: a first send drives
 * the record it wrote ahead, which needs none) uses of this module, handed
 * to it.
 */
export const CLAIM_KIT = { revise, isTerminal, leaseUntil, LOST_DURING_ATTEMPT, NotFoundError };
export type ClaimKit = typeof CLAIM_KIT;
