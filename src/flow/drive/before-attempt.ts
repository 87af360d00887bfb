/**
 * What stands between the loop and its next attempt, in the order the loop
 * must look: the caller's abort, the client shutting down, the deadline
 * (with its one last look for the server's stored answer), the retry delay,
 * the network, the host's retry budget, and whether the platform lets this
 * operation go now (`mayAttempt`: the browser's signed-in user). It waits
 * for what can be waited for and says what the loop does next; it never
 * writes (drive.ts does).
 *
 * The full look, in the later rounds' chunk (later-round.ts): a plain round
 * (first-look.ts) is answered without it. It imports only types of the
 * loop's modules: what it uses of them comes in the kit.
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import { closedByTakeover } from '../decide/claim.js';
import { stopAborted, stopWith } from '../decide/stop.js';
import type { Engine } from '../engine/engine.js';
import type { NextStep, Situation } from './first-look.js';
import type { LaterRoundKit } from './later-round-load.js';
import { waitUntilDue } from './waits.js';

export async function beforeAttempt(kit: LaterRoundKit, engine: Engine, s: Situation): Promise<NextStep> {
  const { record, policy, gate, signal } = s;
  const { mayAttemptNow } = kit;
  if (signal?.aborted) return { kind: 'stop', stop: stopAborted(kit, record) };
  if (engine.shutdown.stopped) return { kind: 'release' };
  const now = engine.runtime.now();
  /** Past the deadline, one attempt may still fetch the server's stored answer (see `settlesByReplay`). */
  const lastLook = now >= record.deadlineAt && settlesByReplay(kit, record, policy, now);
  if (now >= record.deadlineAt && !lastLook) {
    return { kind: 'stop', stop: stopWith(kit, record, 'deadline', 'The deadline passed before the next attempt') };
  }
  // After the deadline's stop (a held-back operation still ends on time), before any wait or attempt.
  if (!mayAttemptNow(engine, record)) return { kind: 'release' };
  if (record.nextAttemptAt > now && !s.dueNow) {
    return { kind: 'again', dueNow: await waitUntilDue(kit, engine, record, now, signal, gate) };
  }
  if (engine.connectivity !== undefined && !engine.connectivity.online()) {
    await kit.waitForOnline(engine, engine.connectivity, record.deadlineAt - now, signal);
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
  const next = kit.loadedNextStep();
  if (next === undefined) {
    // The load may take long (a chunk fetched over a slow network): look again at everything above once it is
    // here (the caller may have aborted, the client closed, the deadline passed meanwhile).
    await kit.loadNextStep(engine.runtime);
    return { kind: 'again', dueNow: s.dueNow };
  }
  const full = gate.upgrade(next.HostGate);
  const admitted = await next.admit(engine, full, record, s.base, signal, s.needsAdmission, kit.NEXT_STEP_KIT);
  if (admitted === 'interrupted') return { kind: 'again', dueNow: false };
  if (admitted === 'past_deadline') {
    if (gate.refusing) {
      return {
        kind: 'stop',
        stop: stopWith(kit, record, 'deadline', 'The host refused connections until the deadline'),
      };
    }
    const why = 'The retry budget for this host stayed exhausted until the deadline';
    return { kind: 'stop', stop: stopWith(kit, record, 'budget', why) };
  }
  // The wait for the gate can be long: asked again, and an admission this loop will not use is given back.
  if (!mayAttemptNow(engine, record)) {
    gate.giveBack(record.key);
    return { kind: 'release' };
  }
  return { kind: 'go', lastLook, untilMs, probe: admitted.probe };
}

/**
 * An operation taken over at (or after) its deadline whose earlier attempt
 * may have taken effect gets one more attempt with the same key, within the
 * server's key retention: the server answers with its stored result (a
 * replay costs nothing) and the operation ends with the truth instead of
 * `unknown`. Only one that its owner saw end: a look past the deadline cut
 * by a kill (closed by the next owner's claim, `closedByTakeover`) learned
 * nothing, so it does not use up the look (issue 28 item 12). Each such look
 * resends under the same key, which the server deduplicates, and key
 * retention bounds them all.
 */
function settlesByReplay(kit: LaterRoundKit, record: OperationRecord, policy: ResolvedPolicy, nowMs: number): boolean {
  if (!kit.mayHaveTakenEffect(record) || nowMs >= record.createdAt + policy.keyRetentionMs) return false;
  return !record.attempts.some((a) => a.startedAt >= record.deadlineAt && !closedByTakeover(kit.CLAIM_KIT, a));
}
