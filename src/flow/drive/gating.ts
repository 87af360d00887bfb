/**
 * The loop's side of the host gate (policy/gate.ts): which gate an
 * operation answers to, waiting for admission, and reporting each attempt's
 * outcome so the gate learns whether the host is serving.
 */

import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { Admission, HostGate } from '../../policy/gate.js';
import type { LazyGate } from '../../policy/lazy-gate.js';
import type { Runtime } from '../../runtime.js';
import type { Classification, Observation } from '../decide/classify.js';
import type { Engine } from '../engine/engine.js';
import { loadNextStep } from './next-step-load.js';
import type { Base } from './outcome.js';
import { pause } from './waits.js';

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
  budgeted = true,
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
      if (admission.atMs > now && !(await pause(engine, admission.atMs - now, signal))) {
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
    const completed = await pause(engine, admission.untilMs - now, signal, woken.signal);
    unsubscribe();
    if (!completed && !woken.signal.aborted) return 'interrupted';
  }
}

export function gateFor(engine: Engine, policy: ResolvedPolicy, url: string): LazyGate | undefined {
  if (policy.budget === undefined) return undefined;
  const host = hostOf(url);
  const scope = policy.budget.per === 'host' ? host : `${policy.name}@${host}`;
  return engine.hostGates.gate(scope, policy.budget);
}

/**
 * The host of a stored URL, remembered per URL string: an application sends
 * to a handful of URLs, and parsing one costs more than the rest of choosing
 * its gate. Bounded: past `HOSTS_KEPT_MAX` distinct URLs (ids in paths), it
 * starts over rather than grow.
 */
export function hostOf(url: string): string {
  let host = hosts.get(url);
  if (host === undefined) {
    host = new URL(url).host;
    if (hosts.size >= HOSTS_KEPT_MAX) hosts.clear();
    hosts.set(url, host);
  }
  return host;
}

const hosts = new Map<string, string>();
export const HOSTS_KEPT_MAX = 256;

/** URLs whose host is remembered (for tests of the bound). */
export function hostsKeptCount(): number {
  return hosts.size;
}

/**
 * The host's full gate, loaded if nothing has needed it yet (a budgeted retry
 * of an operation stored by an earlier page or process, before anything
 * failed here): admission counts the budget, which a pristine gate does not keep.
 */
export async function fullGate(engine: Engine, gate: LazyGate): Promise<HostGate> {
  return gate.full ?? gate.upgrade((await loadNextStep(engine.runtime)).HostGate);
}

export function reportToGate(
  gate: LazyGate | undefined,
  c: Classification,
  probe: boolean,
  nowMs: number,
  hintMs: number | undefined,
  runtime: Runtime,
  /** The operation reporting: a probe's report counts only if it holds the probe out now. */
  id?: string,
  /** The attempt was not sent because the host refused it (`hostRefused`). */
  refused = false,
): void {
  if (gate === undefined) return;
  if (refused) {
    gate.reportRefused(probe, nowMs, runtime.random, id);
  } else if (c.class === 'retryable' || c.class === 'ambiguous') {
    gate.reportFailure(probe, nowMs, hintMs, runtime.random, id);
  } else if (c.class !== 'not_sent') {
    // Any real answer that is not a failure proves the host is serving.
    gate.reportSuccess(probe, nowMs, id);
  }
}

/** On resume, a retry after a failure still passes the gate. */
export function lastAttemptWasBudgeted(record: OperationRecord): boolean {
  const last = record.attempts[record.attempts.length - 1];
  return last?.class === 'retryable' || last?.class === 'ambiguous';
}

/**
 * The transport's codes that say the host itself is unreachable (refused
 * the connection, or its name did not resolve): not this machine being
 * offline, nor a request that could not be built, which no probe of the
 * host would cure.
 */
const HOST_REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

export function hostRefused(observation: Observation): boolean {
  return (
    observation.kind === 'transport_error' &&
    observation.sent === 'not' &&
    HOST_REFUSED_CODES.has(observation.code ?? '')
  );
}
