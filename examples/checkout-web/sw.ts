/**
 * The checkout page's service worker (served as /sw.js when the page is
 * opened with `?sw=1`): it drains the same IndexedDB queue as the page when
 * the browser wakes it (Background Sync, in Chromium), so a payment made
 * offline goes out once the network is back, even with every tab closed.
 * The page passes the API and the database in the script's URL.
 */
import { createServiceWorkerDrainer } from 'oncely/service-worker';
import { DEMO_POLICY } from './policy.js';

interface WorkerScope {
  location: Location;
  addEventListener(type: string, listener: (event: { waitUntil(p: Promise<unknown>): void }) => void): void;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
}

const scope = globalThis as unknown as WorkerScope;
const params = new URLSearchParams(scope.location.search);

// Control the page at once: a demo must not wait for a reload.
scope.addEventListener('install', (event) => event.waitUntil(scope.skipWaiting()));
scope.addEventListener('activate', (event) => event.waitUntil(scope.clients.claim()));

createServiceWorkerDrainer({
  database: params.get('db') ?? '',
  baseUrl: params.get('api') ?? '',
  policy: DEMO_POLICY,
});
