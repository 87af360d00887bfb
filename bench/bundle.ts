/**
 * 5. Browser bundle size, bundled with esbuild for the browser (every
 * dependency included), minified and gzipped (-9).
 *
 * The targets are what a page pays before its first `send`: a page that
 * imports only the client, creates it at load and sends one POST. The code
 * is split as an app's bundler splits it (esbuild `splitting`), and every
 * chunk that page downloads counts: the start-up path (the entry chunk and
 * the chunks it imports statically) and each chunk the client loads with
 * `import()` while it is created and sends. Reported beside it: the start-up
 * path alone, what loads only later (`LOADED_LATER` in lib/bundle-size.ts), and the
 * whole entry as one file.
 *
 *   npx tsx bench/bundle.ts
 */
import { type BundleSize, bundleSize, ENTRIES, gzipShareOf } from './lib/bundle-size.js';
import { emit } from './lib/section.js';
import { fmtFixed, table } from './lib/stats.js';

const BROWSER_TARGET_GZIP_BYTES = 30 * 1024;
const BROWSER_STRETCH_GZIP_BYTES = 25 * 1024;
const CORE_TARGET_GZIP_BYTES = 24 * 1024;
const kb = (bytes: number): string => fmtFixed(bytes / 1024, 1);
const chunks = (n: number): string => `${n} chunk${n === 1 ? '' : 's'}`;

async function main(): Promise<void> {
  const browserClient = await bundleSize('oncely/browser', ['createBrowserClient']);
  const coreClient = await bundleSize('oncely', ['createClient']);
  const sizes: BundleSize[] = [
    browserClient,
    coreClient,
    ...(await Promise.all(Object.keys(ENTRIES).map((entry) => bundleSize(entry)))),
  ];
  const later = (s: BundleSize): number => s.startup.gzipBytes + s.lazy.gzipBytes - s.firstSend.gzipBytes;
  const rows = sizes.map((s) => [
    s.entry,
    `${kb(s.firstSend.gzipBytes)} (${s.firstSend.chunks})`,
    `${kb(s.startup.gzipBytes)} (${s.startup.chunks})`,
    `${kb(later(s))} (${s.startup.chunks + s.lazy.chunks - s.firstSend.chunks})`,
    kb(s.gzipBytes),
    kb(s.minifiedBytes),
  ]);
  const deps = ['zod', 'uuid', 'canonicalize', 'idb-keyval'];
  const shares: Record<string, number> = {};
  for (const dep of deps) shares[dep] = await gzipShareOf('oncely/browser', dep);
  const browser = sizes.find((s) => s.entry === 'oncely/browser');
  const own = (browser?.gzipBytes ?? 0) - Object.values(shares).reduce((a, b) => a + b, 0);
  const where = (dep: string): string =>
    (browserClient.startup.minifiedByPackage[dep] ?? 0) > 0
      ? 'start-up'
      : (browserClient.firstSend.minifiedByPackage[dep] ?? 0) > 0
        ? 'before the first send'
        : (browserClient.lazy.minifiedByPackage[dep] ?? 0) > 0
          ? 'later'
          : '—';
  const shareRows = [
    ...deps.map((dep) => [dep, kb(browser?.minifiedByPackage[dep] ?? 0), kb(shares[dep] ?? 0), where(dep)]),
    ['oncely (src), by difference', kb(browser?.minifiedByPackage.src ?? 0), kb(own), 'all'],
  ];
  emit({
    id: 'bundle',
    title: '5. Browser bundle size (esbuild, platform browser, minified, gzip -9, all dependencies)',
    text: [
      'Before the first send: every chunk a page downloads when it creates the client at load and sends one POST',
      '(chunk count in brackets), each gzipped on its own: the start-up path (the entry chunk and the chunks it',
      'imports statically) and every chunk the client loads with `import()` as it is created. Later: chunks',
      'loaded only by later calls or events: `subscribe` (the live view), `clear()`, reconciliation, the first',
      '`resume()` (the drain loop makes one once it finds due work), `retry`/`discard`, the first operation that',
      'does not succeed (its error), what follows an attempt that did not simply succeed (its class, hint, retry or',
      "stop, the full outage gate: after the first answer), the loop's later rounds (the wait for a retry's time, the",
      'hooks: after the first answer, or at creation with a `headers` callback). Whole: the entry as one file.',
      '',
      table(
        [
          'entry',
          'before first send gzip KB',
          'start-up path gzip KB',
          'later gzip KB',
          'whole gzip KB',
          'whole minified KB',
        ],
        rows,
      ),
      '',
      'What each part adds to the whole `oncely/browser` (gzip: the entry bundled with and without that',
      'package), and where `{ createBrowserClient }` loads it:',
      '',
      table(['part', 'minified KB', 'gzip KB added', 'loaded'], shareRows),
    ].join('\n'),
    targets: [
      {
        name: "{ createBrowserClient } from 'oncely/browser' ≤ 30 KB gzip before the first send (stretch 25)",
        measured: `${kb(browserClient.firstSend.gzipBytes)} KB in ${chunks(browserClient.firstSend.chunks)} (start-up path ${kb(browserClient.startup.gzipBytes)} KB)`,
        met: browserClient.firstSend.gzipBytes <= BROWSER_TARGET_GZIP_BYTES,
        goal: 'bundle',
      },
      {
        name: "{ createClient } from 'oncely' ≤ 24 KB gzip before the first send",
        measured: `${kb(coreClient.firstSend.gzipBytes)} KB in ${chunks(coreClient.firstSend.chunks)} (start-up path ${kb(coreClient.startup.gzipBytes)} KB)`,
        met: coreClient.firstSend.gzipBytes <= CORE_TARGET_GZIP_BYTES,
        goal: 'bundle',
      },
    ],
    data: {
      targetGzipBytes: {
        browserClient: BROWSER_TARGET_GZIP_BYTES,
        browserClientStretch: BROWSER_STRETCH_GZIP_BYTES,
        coreClient: CORE_TARGET_GZIP_BYTES,
      },
      sizes,
      gzipShares: shares,
    },
  });
}

await main();
