/**
 * Browser bundle budget: each entry bundled with esbuild for the browser,
 * every dependency included, minified and gzipped (the same measurement as
 * `bench/bundle.ts`).
 *
 * The goal is `TARGET_GZIP_BYTES` for `oncely/browser`. The entries are over
 * it today (see BENCHMARKS.md: ky and zod alone are ~16 KB of it, oncely's
 * own code ~20 KB), so what is enforced is a ceiling at today's size plus a
 * small margin: the test fails as soon as an entry grows past its ceiling.
 * Lower a ceiling whenever the bundle shrinks, until it reaches the target.
 */
import { describe, expect, it } from 'vitest';
import { bundleSize } from '../../bench/lib/bundle-size.js';

/** The budget asked for `oncely/browser`: 20 KB gzip. */
const TARGET_GZIP_BYTES = 20 * 1024;

/** Enforced now, in gzip bytes. Never raise one without saying why in the change. */
const CEILING_GZIP_BYTES: Record<string, number> = {
  // Raised from 34 KB to 35 KB (34.4 KB measured) for two measured trade-offs of the benchmarks work:
  // resume() packing its drive list off the JS heap (peak RSS at 100k), and the engine's fast paths
  // (record check before zod, one shared attempt-timeout sleep) that cut its CPU per request.
  // Raised to 40 KB / 46 KB (39.0 / 45.2 KB measured) by the edge fixes: request validation before
  // the write-ahead, incremental body reads under maxResponseBytes, the stored-header allow-list,
  // redirect and replay classification, sticky "may have taken effect" with its remediation texts,
  // hooks under the deadline, probe release, bounded attempt history, write order, stored policy,
  // lease watch, typed failures. Correctness first; the bundle work (lazy zod, short messages)
  // brings both down.
  // Lowered when zod left the run-time path (records and options are checked by plain code): 39.2 → 36.3 KB and
  // 46.0 → 43.1 KB, with issue 14's surface added in between.
  oncely: 37 * 1024,
  'oncely/browser': 44 * 1024,
};

describe('browser bundle size', () => {
  for (const [entry, ceiling] of Object.entries(CEILING_GZIP_BYTES)) {
    it(`${entry} stays within ${(ceiling / 1024).toFixed(0)} KB gzip`, async () => {
      const size = await bundleSize(entry);
      expect(
        size.gzipBytes,
        `${entry} is ${(size.gzipBytes / 1024).toFixed(1)} KB gzip (ceiling ${(ceiling / 1024).toFixed(0)} KB, target ${TARGET_GZIP_BYTES / 1024} KB for oncely/browser); by package (minified bytes): ${JSON.stringify(size.minifiedByPackage)}`,
      ).toBeLessThanOrEqual(ceiling);
    });
  }
});
