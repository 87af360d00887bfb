/**
 * oncely/node — everything in `oncely`, plus what needs Node.js: the file
 * store, and clients that fingerprint requests with Node's own SHA-256.
 */
import * as nodeCrypto from 'node:crypto';
import { type ClientOptions, createClient as createUniversalClient, type OncelyClient } from './client.js';

export * from './index.js';

export type { FileStore, FileStoreOptions } from './store/file/index.js';
export { fileStore } from './store/file/index.js';

/**
 * SHA-256 (lower-case hex) of `text` as UTF-8, with `node:crypto`: computed
 * synchronously, where `crypto.subtle.digest` costs ~70 µs of CPU per call
 * on Node 20 (see BENCHMARKS.md). Same digest as the universal WebCrypto one.
 */
export function nodeSha256Hex(text: string): Promise<string> {
  // One-shot `hash` (Node >= 20.12) skips building a Hash object: ~2× faster for a short text.
  const digest =
    typeof nodeCrypto.hash === 'function'
      ? nodeCrypto.hash('sha256', text, 'hex')
      : nodeCrypto.createHash('sha256').update(text, 'utf8').digest('hex');
  return Promise.resolve(digest);
}

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
