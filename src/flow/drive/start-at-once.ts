/**
 * Whether the attempt an owner is about to make may be recorded as started
 * in the same store write that gave it the operation (the write-ahead of a
 * new one, or the claim of a stored one): one durable write before the first
 * byte instead of two. Only when the loop would not wait for anything or call
 * anything first (before-attempt.ts, drive.ts): a `headers` callback (it may
 * fail, and then nothing may look sent), an aborted signal, a shutdown, the
 * deadline or its last look, a retry delay, the network, the host's budget,
 * the platform's `mayAttempt`.
 * Pure apart from reading the engine's state; the caller writes.
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { Engine } from '../engine/engine.js';
import { attemptTimeoutMs } from '../transport/timeouts.js';
import { gateFor, lastAttemptWasBudgeted } from './gating.js';
import { mayAttemptNow } from './may-attempt.js';

/** Attempt N, recorded as started by the write that gave this owner the operation: what the loop needs to send it. */
export interface StartedAttempt {
  timeoutMs: number;
  /** Our monotonic time before the write that records it began: its lease runs from here (lease-check.ts). */
  atMono: number;
}

/** Nothing about this client stops an attempt now: no callback to call first, no abort, no shutdown, not offline. */
export function mayStartNow(engine: Engine, signal: AbortSignal | undefined): boolean {
  const { credentials, connectivity, shutdown } = engine;
  if (credentials !== undefined || signal?.aborted === true || shutdown.stopped) return false;
  return connectivity === undefined || connectivity.online();
}

/** The attempt to record with `record`'s write, or `undefined` when the loop must look first. */
export function startAtOnce(
  engine: Engine,
  record: OperationRecord,
  policy: ResolvedPolicy,
  signal: AbortSignal | undefined,
  nowMs: number,
): StartedAttempt | undefined {
  if (!mayStartNow(engine, signal) || !mayAttemptNow(engine, record)) return undefined;
  if (record.state !== 'pending' || nowMs >= record.deadlineAt || record.nextAttemptAt > nowMs) return undefined;
  const gate = gateFor(engine, policy, record.request.url);
  // A budgeted retry, or any attempt to a host that refuses connections, asks the gate first.
  if (gate !== undefined && (gate.refusing || lastAttemptWasBudgeted(record))) return undefined;
  return { timeoutMs: attemptTimeoutMs(policy, record.deadlineAt, nowMs), atMono: engine.runtime.monotonicNow() };
}
