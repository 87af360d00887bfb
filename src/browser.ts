/**
 * oncely/browser — everything in `oncely`, plus what needs a browser: the
 * IndexedDB store and the browser client (an offline queue that sends each
 * operation once across reloads and tabs).
 */

export type { BrowserClient } from './browser/api.js';
export type { ClearOptions, ClearResult } from './browser/clear.js';
export { createBrowserClient } from './browser/client.js';
export type { BrowserConnectivity, BrowserConnectivityOptions } from './browser/connectivity.js';
export { browserConnectivity } from './browser/connectivity.js';
export type {
  BroadcastChannelLike,
  BrowserEnv,
  KeyValueStorage,
  LockManagerLike,
  NavigatorLike,
  StorageManagerLike,
} from './browser/env.js';
export type {
  BrowserEventName,
  BrowserEvents,
  BrowserListener,
  BrowserOnlyEvents,
  ConnectivityReason,
} from './browser/events.js';
export type { ElectionOptions, LeaderMode, Leadership } from './browser/leader.js';
export type { BrowserClientOptions } from './browser/options.js';
export type { WipeCheck, WipeReport } from './browser/persistence.js';
export type { ClientStatus, OperationView, QueueSnapshot, SubscribeOptions, Subscriber } from './browser/subscribe.js';
export * from './index.js';
export type { IndexedDbStore, IndexedDbStoreOptions } from './store/indexeddb.js';
export { indexedDbStore } from './store/indexeddb.js';
