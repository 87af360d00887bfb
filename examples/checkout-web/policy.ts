/**
 * The retry policy of the demo's payments, shared by the page and the
 * service worker: whoever sends an operation sends it the same way.
 * Short timings so that everything on the page happens within seconds.
 */
import type { PolicyOptions } from 'oncely/browser';

export const DEMO_POLICY: PolicyOptions = {
  attemptTimeoutMs: 1_000,
  deadlineMs: 10 * 60_000,
  maxAttempts: 6,
  backoff: { baseDelayMs: 50, maxDelayMs: 800, multiplier: 2, jitter: 'full' },
  retryAfter: { honor: true, maxRetryAfterMs: 5_000, jitterMs: 100 },
};

/** The owner id prefix of the service worker's attempts (`createServiceWorkerDrainer`). */
export const WORKER_OWNER_PREFIX = 'service-worker:';
