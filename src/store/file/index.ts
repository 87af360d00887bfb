/**
 * The file store for Node.js: see store.ts for the design.
 */

export { LockTimeoutError } from './claim.js';
export type { Machine } from './machine.js';
export { OwnedStoreError } from './owner.js';
export type { FileStore, FileStoreOptions } from './store.js';
export { fileStore } from './store.js';
