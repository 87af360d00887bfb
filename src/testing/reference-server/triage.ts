/**
 * What to do with a request, decided in the same tick its body ended (no
 * await), so the key table's check-and-set stays atomic. In order: an
 * outage answers everything; then the first scripted fault that matches;
 * then authorization; safe methods are reads; a write without a key is an
 * unkeyed effect, or refused where a key is required; a keyed write goes to
 * the key table.
 */
import type { FaultQueue } from './faults.js';
import type { Decision, KeyTable } from './keys.js';
import { type Exchange, headerValue, isSafeMethod, needsKey } from './request.js';
import { injectedResponse, jsonResponse, rejection, withRetryAfter } from './responses.js';
import type { Settings } from './settings.js';
import type { Outage } from './types.js';

/** The decision for one request; a scripted fault that matches is taken off the queue and noted on `exchange`. */
export function triage(
  exchange: Exchange,
  outage: Outage | undefined,
  faults: FaultQueue,
  keys: KeyTable,
  settings: Settings,
): Decision {
  const { profile, authorize } = settings;
  if (outage !== undefined) {
    const response = withRetryAfter(injectedResponse(profile, outage.status, undefined), outage.retryAfter);
    return { kind: 'respond', outcome: 'outage', response };
  }
  exchange.fault = faults.take(exchange);
  const fault = exchange.fault;
  if (fault?.kind === 'reset-before-commit') return { kind: 'destroy' };
  if (fault?.kind === 'status') {
    const injected = withRetryAfter(injectedResponse(profile, fault.status, fault.body), fault.retryAfter);
    const response = { ...injected, headers: { ...injected.headers, ...fault.headers } };
    return { kind: 'respond', outcome: 'fault', response };
  }
  if (authorize !== undefined && !authorize(headerValue(exchange.req, 'authorization'))) {
    return { kind: 'respond', outcome: 'unauthorized', response: rejection(profile, 'unauthorized') };
  }
  if (isSafeMethod(exchange.method)) {
    return { kind: 'respond', outcome: 'read', response: jsonResponse(200, { ok: true }) };
  }
  if (exchange.key === undefined) {
    if (settings.requireKey && needsKey(exchange.method)) {
      return { kind: 'respond', outcome: 'missing_key', response: rejection(profile, 'missing_key') };
    }
    return { kind: 'effect', outcome: 'effect', claim: undefined };
  }
  return keys.decide(exchange.key, exchange.fingerprint);
}
