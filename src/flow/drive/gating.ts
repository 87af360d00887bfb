/**
 * The loop's side of the host gate (policy/gate.ts): which gate an
 * operation answers to, and reporting each attempt's outcome so the gate
 * learns whether the host is serving. Waiting for admission, needed only
 * once something failed, is in next-step.ts.
 */

import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { LazyGate } from '../../policy/lazy-gate.js';
import type { Runtime } from '../../runtime.js';
import type { Classification } from '../decide/classify.js';
import type { Engine } from '../engine/engine.js';

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
