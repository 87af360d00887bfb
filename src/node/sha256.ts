/**
 * SHA-256 for the node entry: `oncely/node` gives it to its clients as the
 * runtime's `sha256Hex` (request fingerprints).
 */
import * as nodeCrypto from 'node:crypto';

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
