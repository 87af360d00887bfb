/**
 * oncely/node — everything in `oncely`, plus what needs Node.js: the file
 * store, and clients that fingerprint requests with Node's own SHA-256.
 */
import { type ClientOptions, createClient as createUniversalClient, type OncelyClient } from './client.js';
import { nodeSha256Hex } from './node/sha256.js';

export * from './index.js';

export type { FileStore, FileStoreOptions, Machine } from './store/file/index.js';
export { fileStore, LockTimeoutError, OwnedStoreError } from './store/file/index.js';

/**
 * `createClient` of `oncely`, with Node's SHA-256 for request fingerprints
 * unless `options.runtime` brings its own `sha256Hex`. Invalid options throw
 * `InvalidOptionsError` naming the field.
 *
 * @example
 * import { createClient, fileStore } from 'oncely/node';
 * const client = createClient({ baseUrl: 'https://api.example.com', store: fileStore({ dir: '.oncely' }) });
 */
export function createClient(options: ClientOptions = {}): OncelyClient {
  // Anything malformed goes through unchanged, for the universal client to reject naming the field.
  const runtime: unknown = options?.runtime;
  if (typeof options !== 'object' || options === null || (runtime !== undefined && typeof runtime !== 'object')) {
    return createUniversalClient(options);
  }
  return createUniversalClient({ ...options, runtime: { sha256Hex: nodeSha256Hex, ...options.runtime } });
}
