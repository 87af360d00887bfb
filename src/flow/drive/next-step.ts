/**
 * What the loop loads once an attempt did not simply succeed (flow/drive/next-step-load.ts):
 * the decisions of flow/decide/next-step.ts (class, hint, retry or stop, the
 * full gate), what the loop does with them and whether the host refused the
 * connection (after-answer.ts), and the wait for the gate's admission. It imports only types from the modules the client
 * bundles; what it uses of them comes in a kit (`NextStepKit`), so it stays
 * a chunk of its own.
 */
import type { OperationRecord } from '../../model.js';
import type { Admission, HostGate } from '../../policy/gate.js';
import type { Engine } from '../engine/engine.js';
import type { NextStepKit } from './next-step-load.js';
import type { Base } from './outcome.js';

export { classify, HostGate, parseServerHintMs } from '../decide/next-step.js';
export { settleStopped } from '../decide/settle-stop.js';
export { afterAnswer } from './after-answer.js';

/**
 * Waits for the gate; 'interrupted' when a signal fired (the loop re-checks).
 * An admission that will not lead to an attempt (past the deadline, or
 * interrupted while waiting for its ramp slot) is given back here; one the
 * loop then fails to use, drive.ts gives back.
 */
export async function admit(
  engine: Engine,
  gate: HostGate,
  record: OperationRecord,
  base: Base,
  signal: AbortSignal | undefined,
  /** A budgeted retry (after a failure the host answered); else only the host's reachability is asked. */
  budgeted: boolean,
  kit: NextStepKit,
): Promise<Extract<Admission, { kind: 'go' }> | 'past_deadline' | 'interrupted'> {
  const { runtime } = engine;
  for (;;) {
    const now = runtime.now();
    const admission = gate.admitRetry(record.key, now, runtime.random, budgeted);
    if (admission.kind === 'go') {
      if (admission.atMs >= record.deadlineAt) {
        // A wait that ended late (a throttled tab, a machine waking) may be handed the probe: unused, it would hold the host shut.
        gate.giveBack(record.key);
        return 'past_deadline';
      }
      if (admission.atMs > now && !(await kit.pause(engine, admission.atMs - now, signal))) {
        gate.giveBack(record.key);
        return 'interrupted';
      }
      return admission;
    }
    if (admission.untilMs >= record.deadlineAt) {
      gate.forget(record.key);
      return 'past_deadline';
    }
    engine.events.emit('held', { ...base, untilMs: admission.untilMs });
    // Ask again at the time given, or as soon as the gate changes (a probe
    // succeeded and held operations are being released).
    const woken = new AbortController();
    const unsubscribe = gate.onChange(() => woken.abort());
    const completed = await kit.pause(engine, admission.untilMs - now, signal, woken.signal);
    unsubscribe();
    if (!completed && !woken.signal.aborted) return 'interrupted';
  }
}
