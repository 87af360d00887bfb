/**
 * The service worker of service-worker.browser.test.ts, as an app would
 * write it: one `createServiceWorkerDrainer` at the top level, configured
 * from its script URL's query (api, db, budget, auth), with the same policy
 * as the pages (service-worker.page.ts). Each wake-up's report is posted
 * on the `oncely-test:reports` channel for an observer page to collect.
 */
import { createServiceWorkerDrainer } from '../../src/service-worker.js';

interface WorkerScope {
  location: Location;
  addEventListener(type: string, listener: (event: { waitUntil(p: Promise<unknown>): void }) => void): void;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
}

const scope = globalThis as unknown as WorkerScope;
const params = new URLSearchParams(scope.location.search);
const api = params.get('api') ?? '';
const reports = new BroadcastChannel('oncely-test:reports');

// Take over at once: the test's pages must not wait for a reload to be controlled.
scope.addEventListener('install', (event) => event.waitUntil(scope.skipWaiting()));
scope.addEventListener('activate', (event) => event.waitUntil(scope.clients.claim()));

createServiceWorkerDrainer({
  database: params.get('db') ?? 'oncely-test',
  baseUrl: api,
  budgetMs: Number(params.get('budget') ?? '20000'),
  concurrency: Number(params.get('concurrency') ?? '4'),
  // Credentials at send time, in the worker: here a constant; an app reads its token from IndexedDB.
  headers: () => ({ authorization: `Bearer ${params.get('token') ?? 'worker'}` }),
  policy: {
    attemptTimeoutMs: Number(params.get('timeout') ?? '15000'),
    deadlineMs: 120_000,
    backoff: { baseDelayMs: 20, maxDelayMs: 100, multiplier: 2, jitter: 'full' },
    retryAfter: { honor: true, maxRetryAfterMs: 1_000, jitterMs: 10 },
    budget: false,
  },
  onDrain: (report) => reports.postMessage(report),
});
