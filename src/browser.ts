/**
 * oncely/browser — everything in `oncely`, plus what needs a browser.
 */
export * from './index.js';
export type { IndexedDbStore, IndexedDbStoreOptions } from './store/indexeddb.js';
export { INDEXEDDB_LAYOUT, indexedDbStore } from './store/indexeddb.js';
