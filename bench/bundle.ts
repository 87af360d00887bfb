/**
 * 5. Browser bundle size, bundled with esbuild for the browser (every
 * dependency included), minified and gzipped (-9).
 *
 * The targets are about start-up: what a checkout page loads and runs before
 * its own code starts, for an app that imports only the client. The same code
 * is split as an app's bundler splits it (esbuild `splitting`): the start-up
 * path is the entry chunk and the chunks it imports statically; the lazy
 * chunks (the client's working parts, loaded with `import()` as the client
 * is created) are reported beside them, and so is the whole entry as one file.
 *
 *   npx tsx bench/bundle.ts
 */
import { type BundleSize, bundleSize, ENTRIES, gzipShareOf } from './lib/bundle-size.js';
import { emit } from './lib/section.js';
import { fmtFixed, table } from './lib/stats.js';

const BROWSER_TARGET_GZIP_BYTES = 22 * 1024;
const CORE_TARGET_GZIP_BYTES = 18 * 1024;
const kb = (bytes: number): string => fmtFixed(bytes / 1024, 1);

async function main(): Promise<void> {
  const browserClient = await bundleSize('oncely/browser', ['createBrowserClient']);
  const coreClient = await bundleSize('oncely', ['createClient']);
  const sizes: BundleSize[] = [
    browserClient,
    coreClient,
    ...(await Promise.all(Object.keys(ENTRIES).map((entry) => bundleSize(entry)))),
  ];
  const rows = sizes.map((s) => [
    s.entry,
    `${kb(s.startup.gzipBytes)} (${s.startup.chunks})`,
    `${kb(s.lazy.gzipBytes)} (${s.lazy.chunks})`,
    kb(s.gzipBytes),
    kb(s.minifiedBytes),
  ]);
  const deps = ['ky', 'zod', 'uuid', 'canonicalize', 'idb-keyval'];
  const shares: Record<string, number> = {};
  for (const dep of deps) shares[dep] = await gzipShareOf('oncely/browser', dep);
  const browser = sizes.find((s) => s.entry === 'oncely/browser');
  const own = (browser?.gzipBytes ?? 0) - Object.values(shares).reduce((a, b) => a + b, 0);
  const where = (dep: string): string =>
    (browserClient.startup.minifiedByPackage[dep] ?? 0) > 0
      ? 'start-up'
      : (browserClient.lazy.minifiedByPackage[dep] ?? 0) > 0
        ? 'lazy'
        : '—';
  const shareRows = [
    ...deps.map((dep) => [dep, kb(browser?.minifiedByPackage[dep] ?? 0), kb(shares[dep] ?? 0), where(dep)]),
    ['oncely (src), by difference', kb(browser?.minifiedByPackage.src ?? 0), kb(own), 'both'],
  ];
  emit({
    id: 'bundle',
    title: '5. Browser bundle size (esbuild, platform browser, minified, gzip -9, all dependencies)',
    text: [
      'Start-up path: the entry chunk and the chunks it imports statically (chunk count in brackets), each',
      'gzipped on its own. Lazy: chunks reached only through `import()`; the client starts loading them as it',
      'is created, beside the page, and its first call waits for them. Whole: the entry as one file.',
      '',
      table(['entry', 'start-up gzip KB', 'lazy gzip KB', 'whole gzip KB', 'whole minified KB'], rows),
      '',
      'What each part adds to the whole `oncely/browser` (gzip: the entry bundled with and without that',
      'package), and where `{ createBrowserClient }` loads it:',
      '',
      table(['part', 'minified KB', 'gzip KB added', 'loaded'], shareRows),
    ].join('\n'),
    targets: [
      {
        name: "{ createBrowserClient } from 'oncely/browser' ≤ 22 KB gzip (start-up path)",
        measured: `${kb(browserClient.startup.gzipBytes)} KB (+ ${kb(browserClient.lazy.gzipBytes)} KB lazy)`,
        met: browserClient.startup.gzipBytes <= BROWSER_TARGET_GZIP_BYTES,
        goal: 'bundle',
      },
      {
        name: "{ createClient } from 'oncely' ≤ 18 KB gzip (start-up path)",
        measured: `${kb(coreClient.startup.gzipBytes)} KB (+ ${kb(coreClient.lazy.gzipBytes)} KB lazy)`,
        met: coreClient.startup.gzipBytes <= CORE_TARGET_GZIP_BYTES,
        goal: 'bundle',
      },
    ],
    data: {
      targetGzipBytes: { browserClient: BROWSER_TARGET_GZIP_BYTES, coreClient: CORE_TARGET_GZIP_BYTES },
      sizes,
      gzipShares: shares,
    },
  });
}

await main();
