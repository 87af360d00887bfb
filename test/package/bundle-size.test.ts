/**
 * Browser bundle budget (the same measurement as `bench/bundle.ts`): bundled
 * with esbuild for the browser, every dependency included, minified and
 * gzipped.
 *
 * The targets are what a page pays before its first `send`: a page that
 * imports only the client, creates it at load and sends one POST, split as
 * an app's bundler splits it, every chunk it downloads counted (the start-up
 * path and each chunk the client loads with `import()` as it is created).
 * `{ createBrowserClient }` from `oncely/browser` ≤ 30 KB (stretch 25),
 * `{ createClient }` from `oncely` ≤ 24 KB. What is enforced is a ceiling at
 * today's size plus a small margin (never above a target), for those and for
 * each whole entry as one file: the test fails as soon as one grows past its
 * ceiling. Lower a ceiling whenever it shrinks.
 */
import { describe, expect, it } from 'vitest';
import { bundleSize, LOADED_LATER } from '../../bench/lib/bundle-size.js';

const KB = 1024;

interface Budget {
  entry: string;
  imports?: readonly string[];
  /** Every chunk before the first send (start-up path included), or the whole entry as one file. */
  measure: 'firstSend' | 'whole';
  ceilingGzipBytes: number;
  targetGzipBytes?: number;
}

/** Enforced now, in gzip bytes. Never raise one without saying why in the change. */
const BUDGETS: readonly Budget[] = [
  // Issue 33: counted as the page pays it, 48.2 KB in 10 chunks before the first send (19.4 KB of them the
  // start-up path). The working parts, the drain loop and the wipe check bundled with the client instead of
  // loaded with import() as it is created (the page needed them before its first send anyway; each chunk
  // boundary cost gzip bytes and a second round of requests): 44.7 KB in 3 chunks. Target missed, see BENCHMARKS.md.
  // Issue 34 then merged beside it (reconciliation's record fields, options and provider ids on the send path, its
  // machinery in a chunk of its own that the first send does not load; OpenTelemetry's record field and events) and
  // issue 29's claim prefetch: 47.3 KB measured, ceiling + 0.3 KB. Issue 33 part 1: fetch without ky (-4.5 KB), no
  // uuid or canonicalize on the path, shorter hint tables and messages, and the chunks loaded later (reconciliation,
  // the live view, clear()) handed what they use of the client instead of importing it, so no shared chunks: 38.75 KB
  // in 1 chunk measured; with the host gate's release after a proven recovery (issue 33, P3) 39.08 KB, ceiling + 0.3 KB.
  // Then the construction-time option checks made smaller (checks that throw where they find the problem, options
  // optional by default, the browser's own options through the same shape, one did-you-mean): 38.79 KB, ceiling + 0.3 KB.
  // Issue 33 item 1: the resume pass (claim pass, drive list, pass order) loaded on the first resume(), which a page
  // whose store holds nothing due never makes: 37.23 KB in 1 chunk, ceiling + 0.3 KB. retry() and discard() loaded on
  // the first of them: 36.89 KB, ceiling + 0.3 KB. The error of an operation that did not succeed (and the provider
  // error read from its answer) loaded the first time a caller meets one: 36.37 KB, ceiling + 0.3 KB. What follows an
  // attempt that did not simply succeed (its class, the server's hint, retry or stop, backoff) loaded the first time
  // an attempt needs it: 34.61 KB, ceiling + 0.3 KB. The host gate pristine until the first such attempt, the full
  // gate (its budget, breaker, ramp and probes) loaded with the rest: 33.88 KB; with the rest loaded in the background
  // after a first plain success (a failure later, offline too, finds it loaded): 33.91 KB, ceiling + 0.3 KB. The
  // record validator (it names the problems of a record that fails the exact check) loaded by the browser's stores
  // the first time they meet such a record: 33.56 KB, ceiling + 0.3 KB. The wait for the gate's admission and the
  // refused-host check moved into the next step's chunk (both needed only once something failed): 33.39 KB, + 0.3 KB.
  // The loop's later rounds (the wait for a retry's time, the `headers` and `onUnauthorized` hooks) loaded on need,
  // after a first answer, or at once by a client with a `headers` callback: 33.27 KB, + 0.3 KB. (32.78 KB was
  // measured first with what stands before an attempt in that chunk too, but the browser's first send needs that.)
  // The caller's AbortError loaded when a call is aborted (the check whether it was stays): 33.15 KB, + 0.3 KB.
  // The texts of a refused request check loaded when a request is refused (the checks stay): 33.00 KB, + 0.3 KB.
  // The error of a send interrupted before it settled built in the failure error's chunk: 32.83 KB, + 0.3 KB.
  // The response schema check loaded for a request with a schema (after its send has left): 32.69 KB, + 0.3 KB.
  // Shorter ids for the request texts, the interrupted send's error in a chunk of its own: 32.69 KB, + 0.3 KB.
  // The call around the resume pass (resume-call.ts) in the pass's chunk: 32.60 KB, + 0.3 KB.
  // The loop's rounds other than a plain first one into the later rounds' and next step's chunks (the full look
  // before an attempt, what follows a non-plain answer, the claim of a stored operation and the lease watch's
  // verdict, the trimming of a full history, the last look past the deadline): 32.34 KB, + 0.3 KB. With both the
  // above: 31.70 KB, + 0.3 KB. The browser's storage checks (the wipe marker, persist()) loaded with import() at
  // start-up, the first send not waiting for them: 32.78 KB alone; with all the above, 31.29 KB, ceiling + 0.3 KB.
  // A stop and its remediation texts only in the chunks that stop an operation (clear()'s too): 30.98 KB, + 0.3 KB.
  // The record changes of a retry and of the auth refresh in the next step's chunk: 30.85 KB, ceiling + 0.3 KB.
  // The record of a stop (settled, or clear()'s abandon) with the stop, in the chunks loaded later: 30.76 KB, + 0.3 KB.
  // The tracked store (store calls reported to a runtime's own `track`) as one Proxy: 31.24 KB, + 0.3 KB. With the
  // stop's chunks above: 30.70 KB, ceiling + 0.3 KB. A URL's blocked-port list and credential query names, and the
  // copy of `meta`, loaded for a request that has one (optional-parts.ts): 30.22 KB. The browser's memory store (for
  // reads that send no key) loaded on the first one, handed what it uses: 29.85 KB. The texts of an interrupted
  // operation on need, the file store's remediations with its errors: 29.56 KB; with the optional parts kept once
  // loaded, 29.58 KB: target met, ceiling + 0.3 KB.
  {
    entry: 'oncely/browser',
    imports: ['createBrowserClient'],
    measure: 'firstSend',
    ceilingGzipBytes: 29.86 * KB,
    targetGzipBytes: 30 * KB,
  },
  // Issue 33: 38.6 KB in 3 chunks before the first send; 36.5 KB as one (the working parts bundled, above),
  // 36.6 KB with the Retry-After jitter kept inside its cap; 39.4 KB with issues 34 and 29 (above), ceiling + 0.3 KB.
  // Issue 33 part 1 (above): 32.05 KB in 1 chunk measured; 32.38 KB with the gate's release, ceiling + 0.3 KB.
  // The smaller option checks (above): 32.14 KB, ceiling + 0.3 KB. The resume pass on first resume() (above): 30.57 KB.
  // retry() and discard() on first use (above): 30.22 KB, ceiling + 0.3 KB. The failure error on first use (above):
  // 29.72 KB, ceiling + 0.3 KB. The next step after an attempt that did not simply succeed on first need (above):
  // 27.96 KB, ceiling + 0.3 KB. The gate pristine until something fails (above): 27.23 KB; loaded in the
  // background after a first plain success (above): 27.25 KB, ceiling + 0.3 KB. The record validator on need
  // (above): 26.90 KB, ceiling + 0.3 KB. Admission and the refused-host check in the next step (above): 26.73 KB,
  // ceiling + 0.3 KB. The loop's later rounds on need (above): 26.56 KB, ceiling + 0.3 KB. The AbortError on
  // need (above): 26.45 KB, ceiling + 0.3 KB. The texts of a refused request on need (above): 26.30 KB, + 0.3 KB.
  // The error of an interrupted send in the failure error's chunk (above): 26.13 KB, ceiling + 0.3 KB.
  // The response schema check on need (above): 26.01 KB, ceiling + 0.3 KB. The call around the resume pass in the
  // pass's chunk (above): 25.93 KB, ceiling + 0.3 KB.
  // The loop's other rounds in the chunks loaded later (above): 25.66 KB alone; with both: 25.08 KB, + 0.3 KB.
  // A stop and its texts only in the chunks that stop an operation (above): 24.81 KB, ceiling + 0.3 KB.
  // A retry's and the auth refresh's record changes in the next step's chunk (above): 24.66 KB, ceiling + 0.3 KB.
  // The record of a stop with the stop, in the chunks loaded later (above): 24.58 KB, ceiling + 0.3 KB.
  // The tracked store as one Proxy (above): 25.03 KB alone; with the stop's chunks, 24.54 KB, ceiling + 0.3 KB.
  // The optional parts' checks on need (above): 24.07 KB. Its memory store behind the kit the browser's lazy one is
  // handed: 24.19 KB. The texts of an interrupted operation on need, the file store's remediations with its errors,
  // the optional parts one module with `meta`'s copy: 23.84 KB; kept once loaded, 23.85 KB: target met; the
  // ceiling is the target.
  {
    entry: 'oncely',
    imports: ['createClient'],
    measure: 'firstSend',
    ceilingGzipBytes: 24 * KB,
    targetGzipBytes: 24 * KB,
  },
  // Whole entries as one file (everything an app can ever load from them): 35.0 KB and 42.4 KB measured, lowered
  // from 37 / 44 KB by ky 1.14 (3.8 KB less than ky 2.1); the hot-path caches, the store durability hint and the
  // write or claim that starts its attempt 1.4 KB more; fixes found by review since (issues 28, 29, 32) brought
  // them to 39.9 KB and 47.5 KB. Issue 33: 38.4 KB and 46.5 KB measured once the working parts are no longer
  // loaded with import() (the loader and its chunk glue are gone). Issue 34 (reconciliation, 2.9 KB of it its lazy
  // chunk; OpenTelemetry's hooks, 0.3 KB) and issue 29's claim prefetch (0.1 KB): 42.3 KB and 49.8 KB measured;
  // ceilings that + 0.3 KB. Issue 33 part 1 (above): 36.74 KB and 44.41 KB measured; 37.08 KB and 44.72 KB with the
  // gate's release, ceilings + 0.3 KB. The smaller option checks (above): 36.81 KB and 44.43 KB, ceilings + 0.3 KB.
  // Raised: the resume pass behind import() (above) costs the one-file builds the glue a bundler wraps an inlined
  // import() in (a lazy init per module, an exports object) and the kit handed to it: 37.20 KB and 44.82 KB
  // measured, ceilings + 0.3 KB, for 1.56 KB less before the first send. The same for retry() and discard() behind
  // import(): 37.34 KB and 44.98 KB, ceilings + 0.3 KB, for 0.34 KB less before the first send; and for the failure
  // error: 37.51 KB and 45.13 KB, ceilings + 0.3 KB, for 0.52 KB less before the first send. And for the next step
  // after an attempt that did not simply succeed (its glue, the kit handed to it, the plain-2xx check beside
  // classify): 37.94 KB and 45.57 KB, ceilings + 0.3 KB, for 1.8 KB less before the first send. And for the
  // gate pristine until something fails (the wrapper beside the full gate): 38.28 KB and 45.88 KB, ceilings + 0.3 KB,
  // for 0.73 KB less before the first send. And for the record validator on need (parseRecord keeps its own
  // static copy, the stores their lazy one): 38.69 KB and 46.27 KB, ceilings + 0.3 KB, for 0.35 KB less before the
  // first send. And for the loop's later rounds on need (their kit, the loader): 39.10 KB and 46.69 KB, ceilings
  // + 0.3 KB, for 0.18 KB (browser) and 0.24 KB (core) less before the first send. And for the AbortError on
  // need: 39.15 KB and 46.76 KB, ceilings + 0.3 KB, for 0.12 KB and 0.11 KB less before the first send.
  // Measured 40.15 KB and 47.75 KB once the merges since had landed; with the texts of a refused request on need
  // (their ids on the path, the loader): 40.59 KB and 48.22 KB, ceilings + 0.3 KB, for 0.21 KB less before the first send.
  // With the error of an interrupted send in the failure error's chunk: 40.68 KB and 48.29 KB, ceilings + 0.3 KB,
  // for 0.17 KB less before the first send. With the response schema check on need: 40.83 KB and 48.42 KB, ceilings
  // + 0.3 KB, for 0.12 KB (core) and 0.14 KB (browser) less before the first send. Shorter ids for the request
  // texts, the interrupted send's error in a chunk of its own (the adapters' one-file builds no longer inline it):
  // 40.79 KB and 48.40 KB, ceilings + 0.3 KB. The call around the resume pass in its chunk: 40.80 KB and 48.40 KB.
  // The loop's other rounds in the chunks loaded later (their kits, loaders and glue): 42.04 KB and 49.65 KB,
  // ceilings + 0.3 KB, for 0.9 KB less before the first send (both entries). The browser's storage checks behind
  // import() (above): oncely/browser 49.86 KB, ceiling + 0.3 KB, for 0.43 KB less before the first send.
  // The tracked store as one Proxy (above): 42.00 KB and 49.83 KB, ceilings + 0.3 KB. Raised: the optional parts'
  // checks, the memory store's kit and lazy load, the interruption texts (each with its loader and glue): 42.47 KB
  // and 50.45 KB, ceilings + 0.3 KB, for 0.86 KB (browser) and 0.71 KB (core) less before the first send.
  { entry: 'oncely', measure: 'whole', ceilingGzipBytes: 42.77 * KB },
  { entry: 'oncely/browser', measure: 'whole', ceilingGzipBytes: 50.75 * KB },
  // A service worker must be one file (no `import()` there): everything it loads before its first drain. 40.9 KB
  // measured (the browser client's 43.0 KB, as one file: no live view, election, wipe watch or clear()); 41.7 KB
  // with the edge fixes above, 42.9 KB with the fleet's claims and round two, 43.6 KB with issue 32.
  {
    entry: 'oncely/service-worker',
    imports: ['createServiceWorkerDrainer'],
    measure: 'whole',
    // Issue 33: 42.0 KB measured (the working parts no longer behind import()); ceiling lowered from 43.7 KB.
    // Issues 34 and 29 (above; one file, so the reconcile chunk is in it): 46.1 KB measured, ceiling + 0.3 KB.
    // Issue 33 part 1 (above): 40.12 KB measured; 40.46 KB with the gate's release, ceiling + 0.3 KB.
    // The smaller option checks (above): 40.20 KB, ceiling + 0.3 KB. Raised: the resume pass behind import()
    // (above), inlined here with its glue: 40.65 KB measured, ceiling + 0.3 KB; with retry() and discard() behind
    // import() too, 40.81 KB; with the failure error too, 40.99 KB; with the next step after an attempt that did not
    // simply succeed too, 41.55 KB; with the gate pristine until something fails, 41.88 KB; with the record
    // validator on need, 42.30 KB; with the loop's later rounds on need, 42.76 KB; with the AbortError on need,
    // 42.81 KB; ceiling + 0.3 KB. 43.78 KB once the merges since had landed; with the texts of a refused request
    // on need, 44.24 KB; with the error of an interrupted send in the failure error's chunk, 44.31 KB; with the response
    // schema check on need, 44.48 KB; with the interrupted send's error in a chunk of its own, 44.45 KB; with the
    // call around the resume pass in its chunk, 44.46 KB; with the loop's other rounds in their chunks (their kits
    // and loaders), 45.66 KB; ceiling + 0.3 KB. The tracked store as one Proxy: 45.61 KB, ceiling + 0.3 KB.
    // With the optional parts' checks, the memory store's lazy load and the interruption texts: 46.22 KB, + 0.3 KB.
    ceilingGzipBytes: 46.52 * KB,
  },
];

const kb = (bytes: number): string => (bytes / KB).toFixed(1);

describe('browser bundle size', () => {
  for (const budget of BUDGETS) {
    const name =
      budget.imports === undefined ? budget.entry : `{ ${budget.imports.join(', ')} } from '${budget.entry}'`;
    it(`${name} (${budget.measure}) stays within ${kb(budget.ceilingGzipBytes)} KB gzip`, async () => {
      const size = await bundleSize(budget.entry, budget.imports);
      const measured = budget.measure === 'firstSend' ? size.firstSend.gzipBytes : size.gzipBytes;
      const byPackage = budget.measure === 'firstSend' ? size.firstSend.minifiedByPackage : size.minifiedByPackage;
      expect(
        measured,
        `${name} is ${kb(measured)} KB gzip (${budget.measure}; ceiling ${kb(budget.ceilingGzipBytes)} KB` +
          `${budget.targetGzipBytes === undefined ? '' : `, target ${kb(budget.targetGzipBytes)} KB`}); ` +
          `by package (minified bytes): ${JSON.stringify(byPackage)}`,
      ).toBeLessThanOrEqual(budget.ceilingGzipBytes);
    });
  }

  it('the service worker drainer (one file) is no larger than the browser client with all it loads', async () => {
    const worker = await bundleSize('oncely/service-worker', ['createServiceWorkerDrainer']);
    const page = await bundleSize('oncely/browser', ['createBrowserClient']);
    expect(worker.gzipBytes).toBeLessThanOrEqual(page.gzipBytes);
  });

  it('leaves out of the first send only what loads later (the live view, clear(), reconciliation, the resume pass, retry and discard, the failure error, the next step after an attempt, the later rounds, the record validator, the storage checks, the optional parts, the memory store, the interruption texts), and those do load lazily', async () => {
    const page = await bundleSize('oncely/browser', ['createBrowserClient']);
    // Each module named as loaded later has a chunk of its own that the first send does not count...
    for (const module of LOADED_LATER) {
      expect(page.lazy.modules, module).toContain(module);
      expect(page.firstSend.modules, module).not.toContain(module);
    }
    // ...and nothing else is left out: the client's working parts and the store are all counted.
    const leftOut = [...page.startup.modules, ...page.lazy.modules].filter((m) => !page.firstSend.modules.includes(m));
    expect(leftOut.filter((m) => !LOADED_LATER.includes(m))).toEqual([]);
    expect(page.firstSend.minifiedByPackage['idb-keyval'] ?? 0).toBeGreaterThan(0);
    expect(page.firstSend.gzipBytes).toBeGreaterThanOrEqual(page.startup.gzipBytes);
  });
});
