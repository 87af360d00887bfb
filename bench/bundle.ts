/**
 * 5. Browser bundle size of each entry, bundled with esbuild for the browser
 * (every dependency included), minified and gzipped. Also what an app that
 * imports only `createClient` (and the IndexedDB store) ships, and how many
 * gzip bytes each dependency adds.
 *
 *   npx tsx bench/bundle.ts
 */
import { bundleSize, ENTRIES, gzipShareOf } from './lib/bundle-size.js';
import { emit } from './lib/section.js';
import { fmtFixed, table } from './lib/stats.js';

const BUDGET_GZIP_BYTES = 20 * 1024;
const kb = (bytes: number): string => fmtFixed(bytes / 1024, 1);

async function main(): Promise<void> {
  const sizes = [
    ...(await Promise.all(Object.keys(ENTRIES).map((entry) => bundleSize(entry)))),
    await bundleSize('oncely', ['createClient']),
    await bundleSize('oncely/browser', ['createClient', 'indexedDbStore']),
  ];
  const rows = sizes.map((s) => [s.entry, kb(s.minifiedBytes), kb(s.gzipBytes)]);
  const deps = ['ky', 'zod', 'uuid', 'canonicalize', 'idb-keyval'];
  const shares: Record<string, number> = {};
  for (const dep of deps) shares[dep] = await gzipShareOf('oncely/browser', dep);
  const browser = sizes.find((s) => s.entry === 'oncely/browser');
  const own = (browser?.gzipBytes ?? 0) - Object.values(shares).reduce((a, b) => a + b, 0);
  const shareRows = [
    ...deps.map((dep) => [dep, kb(browser?.minifiedByPackage[dep] ?? 0), kb(shares[dep] ?? 0)]),
    ['oncely (src), by difference', kb(browser?.minifiedByPackage.src ?? 0), kb(own)],
  ];
  emit({
    id: 'bundle',
    title: '5. Browser bundle size (esbuild, platform browser, minified, gzip -9, all dependencies)',
    text: [
      table(['entry', 'minified KB', 'gzip KB'], rows),
      '',
      'What each part adds to `oncely/browser` (gzip: the entry bundled with and without that package):',
      '',
      table(['part', 'minified KB', 'gzip KB added'], shareRows),
    ].join('\n'),
    targets: [
      {
        name: 'oncely/browser ≤ 20 KB gzip',
        measured: `${kb(browser?.gzipBytes ?? 0)} KB`,
        met: (browser?.gzipBytes ?? Number.POSITIVE_INFINITY) <= BUDGET_GZIP_BYTES,
      },
    ],
    data: { budgetGzipBytes: BUDGET_GZIP_BYTES, sizes, gzipShares: shares },
  });
}

await main();
