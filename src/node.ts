/**
 * oncely/node — everything in `oncely`, plus what needs Node.js: the file
 * store, and clients that fingerprint requests with Node's own SHA-256 and
 * send with node:http (a third of the CPU of Node's `fetch`) where that
 * changes nothing a caller sees: no `fetch` option, Node's own global
 * `fetch` still in place, no redirect to follow (src/node/transport-choice.ts).
 */
import {
  type ClientOptions,
  type ClientPlatform,
  createPlatformClient,
  createClient as createUniversalClient,
  type OncelyClient,
} from './client.js';
import { nodeSha256Hex } from './node/sha256.js';
import { nodeOrFetchTransport } from './node/transport-choice.js';
import { memoryStore } from './store/memory.js';

export * from './index.js';

export type { FileStore, FileStoreOptions, Machine } from './store/file/index.js';
export { fileStore, LockTimeoutError, OwnedStoreError } from './store/file/index.js';

/**
 * `createClient` of `oncely`, with Node's SHA-256 for request fingerprints
 * unless `options.runtime` brings its own `sha256Hex`, and requests sent with
 * node:http's global agent unless `options.fetch` is given, the global
 * `fetch` was replaced, or a keyless read follows redirects (those go
 * through `fetch`, as with `oncely`'s client). Invalid options throw
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
  return createPlatformClient({ ...options, runtime: { sha256Hex: nodeSha256Hex, ...options.runtime } }, NODE_PLATFORM);
}

/** What Node adds to the universal client's parts: the node:http transport, chosen per request. */
const NODE_PLATFORM: ClientPlatform = { transport: (viaFetch) => nodeOrFetchTransport(viaFetch), memoryStore };
