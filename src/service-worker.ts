/**
 * oncely/service-worker — the drain in the app's service worker: the queue
 * the pages' browser client writes (IndexedDB) is sent when Background Sync
 * wakes the worker, even with every tab closed, under the same drainer
 * lock, leases and keys as the pages.
 */

export * from './index.js';
export type { ServiceWorkerDrainer } from './service-worker/drainer.js';
export { createServiceWorkerDrainer } from './service-worker/drainer.js';
export type { ServiceWorkerDrainerOptions } from './service-worker/options.js';
export type {
  DrainMessage,
  ExtendableEventLike,
  MessageEventLike,
  ServiceWorkerScopeLike,
  SyncEventLike,
} from './service-worker/scope.js';
export type { DrainReport, WakeReason } from './service-worker/session.js';
