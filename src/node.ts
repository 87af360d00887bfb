/**
 * oncely/node — everything in `oncely`, plus what needs Node.js.
 */
export * from './index.js';

export type { FileStore, FileStoreOptions } from './store/file/index.js';
export { fileStore, LockTimeoutError } from './store/file/index.js';
