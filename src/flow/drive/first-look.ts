/**
 * The look before an attempt that a plain round needs: nothing aborted or
 * closing, before the deadline, due, no admission to wait for from the
 * host's gate. Then only the platform's `mayAttempt` and the network are
 * asked, here (a page offline before its first send waits without loading
 * anything). Any other case is the full look (before-attempt.ts, in the
 * later rounds' chunk): the browser client's first send, written ahead and
 * then driven, never waits for that chunk.
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { LazyGate } from '../../policy/lazy-gate.js';
import type { Stop } from '../decide/decide.js';
import type { Connectivity, Engine } from '../engine/engine.js';
import { mayAttemptNow } from './may-attempt.js';
import type { Base } from './outcome.js';
import { pause } from './pause.js';

export type NextStep =
  /** Settle the operation with this stop. */
  | { kind: 'stop'; stop: Stop }
  /** The client is shutting down: release the lease and leave the operation to the next owner. */
  | { kind: 'release' }
  /** Something was waited for: look again. `dueNow`: the network came back during the retry delay. */
  | { kind: 'again'; dueNow: boolean }
  /** Attempt now, within `untilMs`; `probe`: the gate let this one through as its probe. */
  | { kind: 'go'; lastLook: boolean; untilMs: number; probe: boolean };

export interface Situation {
  record: OperationRecord;
  policy: ResolvedPolicy;
  gate: LazyGate | undefined;
  base: Base;
  signal: AbortSignal | undefined;
  /** The last attempt was a budgeted retry: the next one needs the gate's admission. */
  needsAdmission: boolean;
  /** The network came back while the loop waited after an unsent attempt: try now, early. */
  dueNow: boolean;
}

/**
 * What the full look would answer, when the situation is a plain one (see
 * above); `undefined` when only the full look can tell. Each condition is
 * one the full look passes on its way to `go`, so both answer the same.
 */
export async function firstLook(engine: Engine, s: Situation): Promise<NextStep | undefined> {
  const { record, gate } = s;
  const now = engine.runtime.now();
  if (
    s.signal?.aborted === true ||
    engine.shutdown.stopped ||
    now >= record.deadlineAt ||
    (record.nextAttemptAt > now && !s.dueNow) ||
    (gate !== undefined && (s.needsAdmission || gate.refusing))
  ) {
    return undefined;
  }
  if (!mayAttemptNow(engine, record)) return { kind: 'release' };
  if (engine.connectivity !== undefined && !engine.connectivity.online()) {
    await waitForOnline(engine, engine.connectivity, record.deadlineAt - now, s.signal);
    return { kind: 'again', dueNow: false };
  }
  return { kind: 'go', lastLook: false, untilMs: record.deadlineAt, probe: false };
}

/** Waits until the platform reports it is back online (or `maxMs` passes, or a signal fires). */
export async function waitForOnline(
  engine: Engine,
  connectivity: Connectivity,
  maxMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const woken = new AbortController();
  const unsubscribe = connectivity.onOnline(() => woken.abort());
  try {
    if (!connectivity.online()) await pause(engine, maxMs, signal, woken.signal);
  } finally {
    unsubscribe();
  }
}
