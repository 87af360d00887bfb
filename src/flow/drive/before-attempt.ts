/**
 * What stands between the loop and its next attempt, in the order the loop
 * must look: the caller's abort, the client shutting down, the deadline
 * (with its one last look for the server's stored answer), the retry delay,
 * the network, the host's retry budget, and whether the platform lets this
 * operation go now (`mayAttempt`: the browser's signed-in user). It waits
 * for what can be waited for and says what the loop does next; it never
 * writes (drive.ts does).
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { LazyGate } from '../../policy/lazy-gate.js';
import { type Stop, stopWith } from '../decide/decide.js';
import type { Connectivity, Engine } from '../engine/engine.js';
import { LATER_ROUND_KIT, loadedLaterRound, loadLaterRound } from './later-round-load.js';
import { mayAttemptNow } from './may-attempt.js';
import { loadedNextStep, loadNextStep, NEXT_STEP_KIT } from './next-step-load.js';
import { type Base, settlesByReplay } from './outcome.js';
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

export async function beforeAttempt(engine: Engine, s: Situation): Promise<NextStep> {
  const { record, policy, gate, signal } = s;
  if (signal?.aborted) return { kind: 'stop', stop: stopWith(record, 'aborted', 'The caller aborted the operation') };
  if (engine.shutdown.stopped) return { kind: 'release' };
  const now = engine.runtime.now();
  /** Past the deadline, one attempt may still fetch the server's stored answer (see `settlesByReplay`). */
  const lastLook = now >= record.deadlineAt && settlesByReplay(record, policy, now);
  if (now >= record.deadlineAt && !lastLook) {
    return { kind: 'stop', stop: stopWith(record, 'deadline', 'The deadline passed before the next attempt') };
  }
  // After the deadline's stop (a held-back operation still ends on time), before any wait or attempt.
  if (!mayAttemptNow(engine, record)) return { kind: 'release' };
  if (record.nextAttemptAt > now && !s.dueNow) {
    // The retry delay's wait is in the later rounds' chunk (a first send has none): loaded here if nothing has
    // loaded it yet, then everything above is looked at again (the load may take long: an abort, a close).
    const later = loadedLaterRound();
    if (later === undefined) {
      await loadLaterRound(engine.runtime);
      return { kind: 'again', dueNow: s.dueNow };
    }
    return { kind: 'again', dueNow: await later.waitUntilDue(LATER_ROUND_KIT, engine, record, now, signal, gate) };
  }
  if (engine.connectivity !== undefined && !engine.connectivity.online()) {
    // Not in the later rounds' chunk: a page offline before its first send waits here without loading anything.
    await waitForOnline(engine, engine.connectivity, record.deadlineAt - now, signal);
    return { kind: 'again', dueNow: false };
  }
  // The window the attempt (or a callback before it) may use.
  const untilMs = lastLook ? record.createdAt + policy.keyRetentionMs : record.deadlineAt;
  // A host that refuses connections holds every attempt for its probe, a first one too (policy/gate.ts).
  if ((!s.needsAdmission && gate?.refusing !== true) || gate === undefined || lastLook) {
    return { kind: 'go', lastLook, untilMs, probe: false };
  }
  // Admission counts the budget, which only the full gate keeps: loaded here if nothing needed it yet (a budgeted
  // retry of an operation stored by an earlier page or process, before anything failed here).
  const next = loadedNextStep();
  if (next === undefined) {
    // The load may take long (a chunk fetched over a slow network): look again at everything above once it is
    // here (the caller may have aborted, the client closed, the deadline passed meanwhile).
    await loadNextStep(engine.runtime);
    return { kind: 'again', dueNow: s.dueNow };
  }
  const full = gate.upgrade(next.HostGate);
  const admitted = await next.admit(engine, full, record, s.base, signal, s.needsAdmission, NEXT_STEP_KIT);
  if (admitted === 'interrupted') return { kind: 'again', dueNow: false };
  if (admitted === 'past_deadline') {
    if (gate.refusing) {
      return { kind: 'stop', stop: stopWith(record, 'deadline', 'The host refused connections until the deadline') };
    }
    const why = 'The retry budget for this host stayed exhausted until the deadline';
    return { kind: 'stop', stop: stopWith(record, 'budget', why) };
  }
  // The wait for the gate can be long: asked again, and an admission this loop will not use is given back.
  if (!mayAttemptNow(engine, record)) {
    gate.giveBack(record.key);
    return { kind: 'release' };
  }
  return { kind: 'go', lastLook, untilMs, probe: admitted.probe };
}

/** Waits until the platform reports it is back online (or `maxMs` passes, or a signal fires). */
async function waitForOnline(
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
