/**
 * The retry policy of the demo's payments, shared by the page and the
 * service worker: whoever sends an operation sends it the same way.
 * Short timings so that everything on the page happens within seconds.
 */
import type { PolicyOptions, ReconcileHook } from 'oncely/browser';
import { PAYMENTS_LOOKUP_PATH, type PaymentLookup } from './protocol.js';

/**
 * What became of a payment that ended `unknown`: the demo server's ledger
 * is asked by the payment's reference (stamped into its body), as an app
 * asks its provider (Stripe: search by `metadata`). The ledger is exact and
 * at once up to date, so "not found" is a safe "not applied" here; a
 * provider's search that lags behind would answer `'unknown'` instead
 * until it is sure.
 */
export const reconcileByLedger: ReconcileHook = async ({ reference }) => {
  if (reference === undefined) return { applied: 'unknown' };
  const response = await fetch(`${PAYMENTS_LOOKUP_PATH}?${new URLSearchParams({ reference })}`, { cache: 'no-store' });
  if (!response.ok) throw new Error(`ledger lookup: HTTP ${response.status}`);
  const lookup = (await response.json()) as PaymentLookup;
  return lookup.found ? { applied: true, result: { status: 201, data: lookup.payment } } : { applied: false };
};

export const DEMO_POLICY: PolicyOptions = {
  attemptTimeoutMs: 1_000,
  deadlineMs: 10 * 60_000,
  maxAttempts: 6,
  backoff: { baseDelayMs: 50, maxDelayMs: 800, multiplier: 2, jitter: 'full' },
  retryAfter: { honor: true, maxRetryAfterMs: 5_000, jitterMs: 100 },
  reconcile: reconcileByLedger,
};

/** The owner id prefix of the service worker's attempts (`createServiceWorkerDrainer`). */
export const WORKER_OWNER_PREFIX = 'service-worker:';
